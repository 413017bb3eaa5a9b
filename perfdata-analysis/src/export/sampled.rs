//! A recording's samples gathered once for the profile viewers' formats ([`crate::export::pprof`],
//! [`crate::export::speedscope`], [`crate::export::firefox`]): the stacks every analysis takes
//! ([`Machine::frames`]: kernel frames, DWARF-unwound user stacks, `[truncated]` ends),
//! their distinct frames named as `collapse` names them (inline chains and source lines
//! from the debug info), the mappings they are in, and the threads and events they belong
//! to. Each format module only lays these tables out.

use crate::machine::stitch::RawStack;
use crate::symbols::dso::{hex, DsoId};
use crate::symbols::{Frame, TRUNCATED};
use crate::AnalysisError as Error;
use crate::{Analyzer, Machine};
use perfdata::types::{RecordBody, SwitchMisc};
use rustc_hash::FxHashMap as HashMap;

/// What [`gather`] keeps.
#[derive(Debug, Clone, Default)]
pub struct GatherOptions {
    /// Name frames by their inline chain from the debug info (as `collapse --inline`);
    /// needs an analyzer opened with `AnalyzerOptions::lines`.
    pub inline: bool,
    /// Keep every sample with its time, in time order, instead of one entry per distinct
    /// (thread, event, stack[, cpu]) with its count and period summed.
    pub each_sample: bool,
    /// Keep the cpu of each sample (aggregated entries are then split per cpu).
    pub cpu: bool,
    /// Collect lost-sample and context-switch records ([`Sampled::lost`],
    /// [`Sampled::switches`]).
    pub markers: bool,
}

/// An address range of a process (or of the kernel) holding frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// The process (-1: the kernel's maps, shared by every process).
    pub pid: i32,
    /// First address.
    pub start: u64,
    /// Exclusive end.
    pub end: u64,
    /// File offset mapped at `start`.
    pub file_offset: u64,
    /// The object's path (`[kernel.kallsyms]`, `[vdso]`, …).
    pub path: String,
    /// Its build id, lowercase hex.
    pub build_id: Option<String>,
    /// In the kernel.
    pub kernel: bool,
}

/// A function: its name as perf prints it and its source file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Function {
    /// Demangled name, argument list kept (collapse drops it).
    pub name: String,
    /// Source file, when the debug info says.
    pub file: Option<String>,
}

/// One function of a frame's inline chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    /// Index in [`Sampled::functions`].
    pub function: u32,
    /// Source line (0: unknown).
    pub line: u32,
}

/// A distinct frame: an address in a mapping (or outside any), or a cut stack's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameInfo {
    /// The address (the first sample's where several share the frame; 0 for `[truncated]`).
    pub address: u64,
    /// In the kernel.
    pub kernel: bool,
    /// Index in [`Sampled::mappings`].
    pub mapping: Option<u32>,
    /// The functions at the address, innermost (the inlined callee) first, the
    /// containing function last; empty when no symbol covers the address.
    pub lines: Vec<Line>,
    /// The name `collapse` gives a frame without a symbol: `[libc.so.6]` (its object),
    /// `[unknown]` outside any map; for a symbolized frame, its function.
    pub fallback_name: String,
    /// The `[truncated]` end of a stack cut short.
    pub truncated: bool,
}

/// A node of the stack tree: a frame and the stack of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StackNode {
    /// The caller's stack (index in [`Sampled::stacks`]); `None` at the root.
    pub parent: Option<u32>,
    /// Index in [`Sampled::frames`].
    pub frame: u32,
}

/// A thread under the name it had when sampled (a thread that execs or renames itself
/// gets one entry per name, as `collapse` and `report` split it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// The thread's name (`comm`).
    pub name: String,
    /// Its process's name (the main thread's comm).
    pub process_name: String,
}

/// Samples of one thread, event and stack: one sample (with its time) under
/// [`GatherOptions::each_sample`], else all of them summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleEntry {
    /// Index in [`Sampled::threads`].
    pub thread: u32,
    /// Index in [`Sampled::events`].
    pub event: u32,
    /// Index in [`Sampled::stacks`] (the leaf's node).
    pub stack: u32,
    /// The cpu, under [`GatherOptions::cpu`].
    pub cpu: Option<u32>,
    /// The time, under [`GatherOptions::each_sample`].
    pub time: Option<u64>,
    /// Samples.
    pub count: u64,
    /// Their periods summed (what `report` weighs by).
    pub period: u64,
}

/// Samples perf lost (a LOST or LOST_SAMPLES record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lost {
    /// When it was written (0: unknown).
    pub time: u64,
    /// The thread of its sample id, when recorded.
    pub pid_tid: Option<(i32, i32)>,
    /// Samples (or records) lost.
    pub count: u64,
}

/// A context switch of a thread (a SWITCH or SWITCH_CPU_WIDE record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch {
    /// When.
    pub time: u64,
    /// The thread switched.
    pub pid: i32,
    /// Its id.
    pub tid: i32,
    /// Switched out (else in).
    pub out: bool,
}

/// An event of the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventInfo {
    /// Its name (`cycles:u`, `cpu-clock`).
    pub name: String,
    /// Samples.
    pub samples: u64,
    /// Periods summed.
    pub period: u64,
}

impl EventInfo {
    /// The unit its periods count: `nanoseconds` for the clock events (whose period is
    /// time), `count` otherwise.
    pub fn unit(&self) -> &'static str {
        let base = self.name.split(':').next().unwrap_or("");
        match base {
            "cpu-clock" | "task-clock" => "nanoseconds",
            _ => "count",
        }
    }
}

/// The samples of a recording with their tables ([`gather`]).
#[derive(Debug, Clone, Default)]
pub struct Sampled {
    /// Events by attr index (those without samples included, with zero counts).
    pub events: Vec<EventInfo>,
    /// Threads.
    pub threads: Vec<ThreadInfo>,
    /// Mappings holding frames.
    pub mappings: Vec<Mapping>,
    /// Functions named by frames.
    pub functions: Vec<Function>,
    /// Distinct frames.
    pub frames: Vec<FrameInfo>,
    /// The stack tree.
    pub stacks: Vec<StackNode>,
    /// The samples: in time order under [`GatherOptions::each_sample`], else by first
    /// appearance.
    pub samples: Vec<SampleEntry>,
    /// Lost-sample records, under [`GatherOptions::markers`].
    pub lost: Vec<Lost>,
    /// Context switches, under [`GatherOptions::markers`].
    pub switches: Vec<Switch>,
    /// The perf that recorded it (VERSION feature).
    pub perf_version: Option<String>,
    /// The `perf record` command line (CMDLINE feature).
    pub command_line: Option<String>,
    /// Time of the first and last sample (ns, perf's clock).
    pub time_range: Option<(u64, u64)>,
}

impl Sampled {
    /// The frames of a stack, leaf first.
    pub fn frames_of(&self, stack: u32) -> impl Iterator<Item = u32> + '_ {
        let mut next = Some(stack);
        std::iter::from_fn(move || {
            let node = self.stacks[next? as usize];
            next = node.parent;
            Some(node.frame)
        })
    }

    /// A frame's names, outermost first, as `collapse` writes them (before its
    /// argument-list tidying): the inline chain, or the fallback name.
    pub fn frame_names(&self, frame: u32) -> impl Iterator<Item = &str> + '_ {
        let f = &self.frames[frame as usize];
        let fallback = f.lines.is_empty().then_some(f.fallback_name.as_str());
        f.lines
            .iter()
            .rev()
            .map(|l| self.functions[l.function as usize].name.as_str())
            .chain(fallback)
    }
}

/// Frame identity: the mapping and map-relative address, or the bare address without
/// one; a cut stack's end.
type FrameKey = (Option<u32>, bool, u64, bool);

/// Walks the recording once, gathering its samples and tables.
pub fn gather(analyzer: &mut Analyzer<'_>, opts: &GatherOptions) -> Result<Sampled, Error> {
    gather_into(analyzer, opts, None)
}

/// What [`gather_each`] hands each sample to: the tables gathered so far (the sample's
/// thread, event and stack are in them) and the sample.
pub type SampleSink<'s> = dyn FnMut(&Sampled, &SampleEntry) -> Result<(), Error> + 's;

/// Walks the recording once, gathering its tables, and gives every sample to `sink` in
/// time order instead of keeping it ([`Sampled::samples`] stays empty): what a writer
/// whose memory must not grow with the number of samples gathers with. `opts.each_sample`
/// is implied.
pub fn gather_each(
    analyzer: &mut Analyzer<'_>,
    opts: &GatherOptions,
    sink: &mut SampleSink<'_>,
) -> Result<Sampled, Error> {
    let opts = GatherOptions {
        each_sample: true,
        ..opts.clone()
    };
    gather_into(analyzer, &opts, Some(sink))
}

fn gather_into(
    analyzer: &mut Analyzer<'_>,
    opts: &GatherOptions,
    mut sink: Option<&mut SampleSink<'_>>,
) -> Result<Sampled, Error> {
    let mut out = Sampled::default();
    let info = crate::Producer::of(&analyzer.data);
    out.perf_version = info.perf_version;
    out.command_line = info.command_line;
    out.events = analyzer
        .events
        .iter()
        .map(|name| EventInfo {
            name: name.clone(),
            samples: 0,
            period: 0,
        })
        .collect();
    if out.events.is_empty() {
        out.events.push(EventInfo {
            name: "samples".into(),
            samples: 0,
            period: 0,
        });
    }
    let n_events = out.events.len();
    let mut threads: HashMap<(i32, i32, Option<crate::machine::CommId>), u32> = HashMap::default();
    let mut mappings: HashMap<(i32, u64, u64, u64, DsoId), u32> = HashMap::default();
    let mut functions: HashMap<Function, u32> = HashMap::default();
    let mut frame_ids: HashMap<FrameKey, u32> = HashMap::default();
    let mut nodes: HashMap<StackNode, u32> = HashMap::default();
    let mut aggregated: HashMap<(u32, u32, u32, Option<u32>), u32> = HashMap::default();
    let mut frames: Vec<Frame> = vec![];
    let mut ids: Vec<u32> = vec![];
    let mut stack = crate::stack::Stack::default();
    // (thread, stack) of the samples met, by what they are resolved from: a repeated
    // stack (most samples) costs one lookup. Forgotten when large (bounded memory).
    let mut met: HashMap<RawStack, (u32, u32)> = HashMap::default();
    analyzer.run(
        crate::RunOptions::default(),
        |machine, item| -> Result<bool, crate::AnalysisError> {
            let Some(s) = &item.sample else {
                if opts.markers {
                    note_marker(item, &mut out)?;
                }
                return Ok(true);
            };
            // As `report` counts: an event index past the attrs is the last event.
            let event = s.event.min(n_events - 1);
            let raw = RawStack::of(machine, s, &mut stack)?;
            let found = met.get(&raw).copied();
            let (thread, stack_id) = match found {
                Some(ids) => {
                    raw.give_back(&mut stack);
                    ids
                }
                None => {
                    stack.addrs = raw.addrs.clone();
                    machine.resolve_stack(s.pid, &stack, &mut frames);
                    ids.clear();
                    for f in &frames {
                        ids.push(frame_id(
                            machine,
                            s.pid,
                            f,
                            opts.inline,
                            &mut out,
                            &mut mappings,
                            &mut functions,
                            &mut frame_ids,
                        ));
                    }
                    // Root first into the tree.
                    let mut parent = None;
                    for &frame in ids.iter().rev() {
                        let node = StackNode { parent, frame };
                        let next = out.stacks.len() as u32;
                        let id = *nodes.entry(node).or_insert(next);
                        if id == next {
                            out.stacks.push(node);
                        }
                        parent = Some(id);
                    }
                    let stack = parent.expect("a stack has at least its ip");
                    let comm = machine.comm_id(s.tid);
                    let thread = *threads.entry((s.pid, s.tid, comm)).or_insert_with(|| {
                        out.threads.push(ThreadInfo {
                            pid: s.pid,
                            tid: s.tid,
                            name: machine.comm(s.tid).into_owned(),
                            process_name: machine.comm(s.pid).into_owned(),
                        });
                        out.threads.len() as u32 - 1
                    });
                    if met.len() >= 1 << 16 {
                        met.clear();
                    }
                    met.insert(raw, (thread, stack));
                    (thread, stack)
                }
            };
            let stack = stack_id;
            let cpu = s.cpu.filter(|_| opts.cpu);
            let ev = &mut out.events[event];
            ev.samples += 1;
            ev.period += s.period;
            if let Some(t) = s.time {
                out.time_range = Some(out.time_range.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
            }
            let entry = SampleEntry {
                thread,
                event: event as u32,
                stack,
                cpu,
                time: s.time.filter(|_| opts.each_sample),
                count: 1,
                period: s.period,
            };
            if let Some(sink) = sink.as_mut() {
                sink(&out, &entry)?;
            } else if opts.each_sample {
                out.samples.push(entry);
            } else {
                let next = out.samples.len() as u32;
                let i = *aggregated
                    .entry((thread, event as u32, stack, cpu))
                    .or_insert(next);
                if i == next {
                    out.samples.push(entry);
                } else {
                    let e = &mut out.samples[i as usize];
                    e.count += 1;
                    e.period += s.period;
                }
            }
            Ok(true)
        },
    )?;
    Ok(out)
}

/// The id of a frame, adding it (with its mapping and functions) when new.
#[allow(clippy::too_many_arguments)]
fn frame_id(
    machine: &Machine,
    pid: i32,
    f: &Frame,
    inline: bool,
    out: &mut Sampled,
    mappings: &mut HashMap<(i32, u64, u64, u64, DsoId), u32>,
    functions: &mut HashMap<Function, u32>,
    frame_ids: &mut HashMap<FrameKey, u32>,
) -> u32 {
    let mapping = match (f.truncated, f.dso) {
        (false, Some((dso, _))) => machine.map_at(pid, f.kernel, f.ip).map(|m| {
            let owner = if f.kernel { -1 } else { pid };
            let key = (owner, m.start, m.end, m.pgoff, dso);
            *mappings.entry(key).or_insert_with(|| {
                let d = machine.dsos.get(dso);
                out.mappings.push(Mapping {
                    pid: owner,
                    start: m.start,
                    end: m.end,
                    file_offset: m.pgoff,
                    path: d.name.clone(),
                    build_id: d.build_id.as_deref().map(hex),
                    kernel: f.kernel,
                });
                out.mappings.len() as u32 - 1
            })
        }),
        _ => None,
    };
    let key: FrameKey = match (mapping, f.dso) {
        (Some(m), Some((_, off))) => (Some(m), f.kernel, off, false),
        _ => (None, f.kernel, f.ip, f.truncated),
    };
    if let Some(&id) = frame_ids.get(&key) {
        return id;
    }
    let mut function = |name: String, file: Option<String>| -> u32 {
        let func = Function { name, file };
        if let Some(&i) = functions.get(&func) {
            return i;
        }
        out.functions.push(func.clone());
        let i = out.functions.len() as u32 - 1;
        functions.insert(func, i);
        i
    };
    let mut lines = vec![];
    if f.truncated {
        lines.push(Line {
            function: function(TRUNCATED.to_string(), None),
            line: 0,
        });
    } else if let (Some(sym), Some((dso, map_ip))) = (f.symbol, f.dso) {
        let addr = machine.dsos.lookup_address(dso, map_ip);
        if inline {
            for l in machine.dsos.inline_lines(dso, addr) {
                lines.push(Line {
                    function: function(l.function, l.file),
                    line: l.line,
                });
            }
        }
        if lines.is_empty() {
            // The function's own file and a line of it: the outermost of the address's
            // inline chain (the address's own line may be in an inlined callee's header,
            // and a function named with each of its callees' files would be several
            // functions to a viewer).
            let outer = if inline {
                None
            } else {
                machine.dsos.inline_lines(dso, addr).pop()
            };
            let (file, line) = match outer {
                Some(l) => (l.file, l.line),
                None => match machine.dsos.source_line(dso, addr) {
                    Some((file, line)) => (Some(file), line),
                    None => (None, 0),
                },
            };
            let name = machine.dsos.symbol_name(sym).to_string();
            lines.push(Line {
                function: function(name, file),
                line,
            });
        }
    }
    let fallback_name = crate::symbols::naming::raw_frame_name(&machine.dsos, f);
    out.frames.push(FrameInfo {
        address: f.ip,
        kernel: f.kernel,
        mapping,
        lines,
        fallback_name,
        truncated: f.truncated,
    });
    let id = out.frames.len() as u32 - 1;
    frame_ids.insert(key, id);
    id
}

/// A lost-sample or context-switch record, kept for markers.
fn note_marker(item: &crate::Replayed<'_>, out: &mut Sampled) -> Result<(), Error> {
    use perfdata::types::RecordType;
    let ty = item.rec.record_type();
    if !matches!(
        ty,
        RecordType::LOST
            | RecordType::LOST_SAMPLES
            | RecordType::SWITCH
            | RecordType::SWITCH_CPU_WIDE
    ) {
        return Ok(());
    }
    let time = item.time.unwrap_or(0);
    let thread = |id: &Option<perfdata::types::SampleId>| {
        id.as_ref()
            .and_then(|i| Some((i.pid? as i32, i.tid? as i32)))
    };
    let out_flag = SwitchMisc(item.rec.header.misc.0).contains(SwitchMisc::SWITCH_OUT);
    match item.decode()? {
        RecordBody::Lost(l) => out.lost.push(Lost {
            time,
            pid_tid: thread(&l.sample_id),
            count: l.lost,
        }),
        RecordBody::LostSamples(l) => out.lost.push(Lost {
            time,
            pid_tid: thread(&l.sample_id),
            count: l.lost,
        }),
        RecordBody::Switch(s) => {
            if let Some((pid, tid)) = thread(&s.sample_id) {
                out.switches.push(Switch {
                    time,
                    pid,
                    tid,
                    out: out_flag,
                });
            }
        }
        RecordBody::SwitchCpuWide(s) => {
            if let Some((pid, tid)) = thread(&s.sample_id) {
                out.switches.push(Switch {
                    time,
                    pid,
                    tid,
                    out: out_flag,
                });
            }
        }
        _ => {}
    }
    Ok(())
}
