//! Off-CPU time: for each thread, the time between its being switched out and switched
//! back in, summed per thread and per stack at switch-out (Brendan Gregg's off-CPU
//! analysis: the folded stacks weighted by nanoseconds make the off-CPU flame graph).
//!
//! Two sources, as a recording has them:
//!
//! * **`sched:sched_switch` samples** (`perf record -e sched:sched_switch -g`): a sample
//!   is taken in the task switching out (`prev_pid`), so its callchain *is* the stack at
//!   switch-out (`__schedule` ← … ← the blocking call); `next_pid` says which thread is
//!   switched in, at the sample's time. `prev_state` 0 (`R`, still runnable) means the
//!   thread was preempted rather than blocked. A thread's switch-in is only seen when the
//!   recording covers the CPU it comes back on: record system-wide (`-a`) for complete
//!   intervals (a per-task recording sees only its own threads' switch-outs).
//! * **Context-switch records** (`perf record --switch-events`: PERF_RECORD_SWITCH, or
//!   SWITCH_CPU_WIDE system-wide): each says that the thread of its sample id went out
//!   (misc `SWITCH_OUT`; `SWITCH_OUT_PREEMPT`: preempted while runnable) or came in. They
//!   carry no stack: the stack at switch-out is the thread's **last sample before it**
//!   (of any event) — the last thing it was seen doing, which for a thread that blocks is
//!   the code that led to the blocking call (the closer the sampling, the closer that
//!   is); a thread switched out before any sample of it has the stack `[unknown]`.
//!
//! The tracepoint is used when the recording has it (its stacks are exact), else the
//! switch records. A switch-in the recording lacks (a thread switching out again with
//! no switch-in since its last switch-out: the tracepoint's samples of the idle task
//! switching a thread in go missing under load) is taken to be the CPU's last switch
//! before that switch-out, as `perf sched timehist` takes it: a lower bound, the
//! possible excess reported ([`ThreadOffCpu::unseen_slack_ns`]). Intervals still open at the end of the recording, and switch-ins
//! without a switch-out before them (the recording started while the thread was off the
//! CPU), are not counted — as `perf sched timehist`, whose per-event wait time plus
//! scheduling delay is the same interval (the conformance check compares them).

use super::weights::{Anchor, SampleWeights};
use crate::stack::Stack;
use crate::symbols::naming::unsplit_frame_name;
use crate::symbols::Frame;
use crate::AnalysisError as Error;
use crate::{Analyzer, Machine};
use perfdata::tracepoint::{field_value, FieldValue, Formats};
use perfdata::types::{RecordBody, RecordType};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Where switch-outs and switch-ins come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// `sched:sched_switch` tracepoint samples.
    SchedSwitch,
    /// PERF_RECORD_SWITCH / SWITCH_CPU_WIDE records.
    SwitchRecords,
}

impl Source {
    /// The name used on the command line and in the text.
    pub fn name(self) -> &'static str {
        match self {
            Source::SchedSwitch => "sched:sched_switch",
            Source::SwitchRecords => "switch records",
        }
    }
}

/// Options of [`off_cpu`].
#[derive(Debug, Clone, Copy, Default)]
pub struct OffCpuOptions {
    /// The source; `None`: the tracepoint when the recording has it, else the switch
    /// records.
    pub source: Option<Source>,
}

/// One thread's off-CPU time.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ThreadOffCpu {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// The thread's name (its last).
    pub comm: String,
    /// Σ of its intervals, switch-out to switch-in, in nanoseconds.
    pub off_cpu_ns: u64,
    /// The intervals counted.
    pub intervals: u64,
    /// The part of `off_cpu_ns` spent runnable (preempted: waiting for a CPU, not
    /// blocked).
    pub preempted_ns: u64,
    /// The last interval counted (before the thread's last switch-in). `perf sched
    /// timehist` reports an interval at the thread's *next* switch-out, so it leaves this
    /// one out when the recording saw none after it (the recording ended), or when that
    /// switch-out is the thread's exit (a sample perf attributes to pid -1).
    pub last_interval_ns: u64,
    /// The first interval counted. perf enables its switch records (a tracking event)
    /// when the recording starts, a workload's own events when it execs: the switch
    /// records of a recorded workload hold one interval more, at its start (the wait of
    /// the forked child for perf's go), than its `sched:sched_switch` samples.
    pub first_interval_ns: u64,
    /// Intervals whose switch-in the recording does not hold (seen: `sched_switch`
    /// samples of the idle task switching a thread in, missing under load while the
    /// switch records have them). As `perf sched timehist`, such an interval ends at the
    /// last switch seen on the CPU before the thread's next switch-out there: the thread
    /// cannot have come in earlier. A lower bound, counted in `off_cpu_ns`.
    pub unseen_switch_ins: u64,
    /// How much longer those intervals may have been: Σ of the time from each one's
    /// inferred end to the thread's switch-out that revealed it.
    pub unseen_slack_ns: u64,
}

/// Off-CPU time of one thread at one stack.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StackOffCpu {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// The thread's name.
    pub comm: String,
    /// The stack at switch-out, leaf first (function names; `[object]` or `[unknown]`
    /// where no symbol covers an address).
    pub frames: Vec<String>,
    /// Σ of the intervals that started at this stack, in nanoseconds.
    pub off_cpu_ns: u64,
    /// The intervals counted.
    pub intervals: u64,
}

/// The off-CPU time of a recording.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OffCpu {
    /// Where switches were read from.
    pub source: Source,
    /// Σ over every thread, in nanoseconds.
    pub total_ns: u64,
    /// Threads, most off-CPU time first (then by pid, tid).
    pub threads: Vec<ThreadOffCpu>,
    /// (thread, stack) pairs, most off-CPU time first.
    pub stacks: Vec<StackOffCpu>,
    /// The intervals by the sample whose stack they were given: what `report` and
    /// `collapse` weigh with `--off-cpu`.
    #[serde(skip)]
    pub weights: SampleWeights,
}

/// A thread switched out, waiting for its switch-in.
struct Out {
    time: u64,
    pid: i32,
    stack: u32,
    preempted: bool,
    /// The sample the stack is from.
    anchor: Option<Anchor>,
}

/// The fields of `sched_switch` read, by tracepoint id.
#[derive(Clone)]
struct SwitchFields {
    prev_pid: perfdata::tracepoint::Field,
    prev_state: Option<perfdata::tracepoint::Field>,
    next_pid: perfdata::tracepoint::Field,
}

#[derive(Default)]
struct Acc {
    threads: HashMap<i32, ThreadOffCpu>,
    stacks: HashMap<(i32, u32), (u64, u64)>,
    /// Interned stacks: frames leaf first.
    stack_ids: HashMap<Vec<String>, u32>,
    stack_list: Vec<Vec<String>>,
    out: HashMap<i32, Out>,
    /// Per CPU, the time of the last switch seen there.
    cpu_last: HashMap<u32, u64>,
    weights: SampleWeights,
}

impl Acc {
    fn intern(&mut self, frames: Vec<String>) -> u32 {
        if let Some(&id) = self.stack_ids.get(&frames) {
            return id;
        }
        let id = self.stack_list.len() as u32;
        self.stack_list.push(frames.clone());
        self.stack_ids.insert(frames, id);
        id
    }

    fn switch_out(&mut self, tid: i32, pid: i32, time: u64, stack: u32, preempted: bool) {
        self.out.insert(
            tid,
            Out {
                time,
                pid,
                stack,
                preempted,
                anchor: None,
            },
        );
    }

    /// The sample whose stack `tid`'s last switch-out took.
    fn anchor(&mut self, tid: i32, anchor: Option<Anchor>) {
        if let Some(o) = self.out.get_mut(&tid) {
            o.anchor = anchor;
        }
    }

    /// `tid` switches out on `cpu` at `now` while still waiting for the switch-in of its
    /// last switch-out: that switch-in is not in the recording. The thread came in at
    /// the CPU's last switch before this one, or later (perf sched timehist's rule).
    fn unseen_switch_in(&mut self, m: &Machine, tid: i32, cpu: Option<u32>, now: u64) {
        let Some(&last) = cpu.and_then(|c| self.cpu_last.get(&c)) else {
            return;
        };
        if !self
            .out
            .get(&tid)
            .is_some_and(|o| o.time < last && last <= now)
        {
            return;
        }
        self.switch_in(m, tid, last);
        if let Some(t) = self.threads.get_mut(&tid) {
            t.unseen_switch_ins += 1;
            t.unseen_slack_ns += now - last;
        }
    }

    /// A switch was seen on `cpu` at `time`.
    fn switched(&mut self, cpu: Option<u32>, time: u64) {
        if let Some(c) = cpu {
            self.cpu_last.insert(c, time);
        }
    }

    fn switch_in(&mut self, m: &Machine, tid: i32, time: u64) {
        let Some(o) = self.out.remove(&tid) else {
            return;
        };
        let dt = time.saturating_sub(o.time);
        let t = self.threads.entry(tid).or_insert_with(|| ThreadOffCpu {
            pid: o.pid,
            tid,
            comm: String::new(),
            off_cpu_ns: 0,
            intervals: 0,
            preempted_ns: 0,
            last_interval_ns: 0,
            first_interval_ns: dt,
            unseen_switch_ins: 0,
            unseen_slack_ns: 0,
        });
        t.comm = m.comm(tid).into_owned();
        t.off_cpu_ns += dt;
        t.intervals += 1;
        t.last_interval_ns = dt;
        if o.preempted {
            t.preempted_ns += dt;
        }
        let s = self.stacks.entry((tid, o.stack)).or_default();
        s.0 += dt;
        s.1 += 1;
        match o.anchor {
            Some(a) => self.weights.add(a, dt),
            None => self.weights.unattributed_ns += dt,
        }
    }
}

/// Reads the off-CPU intervals of a recording, every thread's: the analyzer's sample
/// filter is not applied (`report --off-cpu` applies it to the samples the intervals
/// are attributed to).
pub fn off_cpu(analyzer: &mut Analyzer<'_>, opts: &OffCpuOptions) -> Result<OffCpu, Error> {
    let switch_event = analyzer
        .events
        .iter()
        .position(|e| e == "sched:sched_switch");
    let source = match (opts.source, switch_event) {
        (Some(Source::SchedSwitch), None) => return Err(crate::AnalysisError::unsupported(
            "no sched:sched_switch event in this recording (record with -e sched:sched_switch -g)",
        )),
        (Some(s), _) => s,
        (None, Some(_)) => Source::SchedSwitch,
        (None, None) => Source::SwitchRecords,
    };
    let mut formats = Formats::of_file(&analyzer.data);
    let endian = analyzer.data.format.endian;
    let mut fields: HashMap<u16, Option<SwitchFields>> = HashMap::default();
    let mut acc = Acc::default();
    let mut frames: Vec<Frame> = vec![];
    // Switch records: the last stack of each thread, as addresses (resolved only when
    // the thread switches out).
    let mut last: HashMap<i32, (Stack, Option<Anchor>)> = HashMap::default();
    let mut scratch = Stack::default();
    let mut seen_switch = false;
    let every_sample = crate::RunOptions {
        filtered: false,
        ..Default::default()
    };
    analyzer.run(every_sample, |machine, item| -> Result<bool, crate::AnalysisError> {
        let ty = item.rec.record_type();
        if ty == RecordType::HEADER_TRACING_DATA && formats.is_none() {
            formats = Formats::of_record(item.rec, endian);
            return Ok(true);
        }
        match source {
            Source::SchedSwitch => {
                let Some(s) = &item.sample else {
                    return Ok(true);
                };
                if Some(s.event) != switch_event {
                    return Ok(true);
                }
                let (Some(time), Some(raw)) = (s.time, s.view.raw()?) else {
                    return Ok(true);
                };
                let raw: &[u8] = &raw.data;
                let Some(f) = formats.as_ref().and_then(|f| switch_fields(f, raw, &mut fields))
                else {
                    return Err(crate::AnalysisError::unsupported(
                        "sched:sched_switch samples without the event's format (no tracing data)",
                    ));
                };
                let int = |field: &perfdata::tracepoint::Field| match field_value(raw, field, endian)
                {
                    Some(FieldValue::Signed(v)) => Some(v),
                    Some(FieldValue::Unsigned(v)) => Some(v as i64),
                    _ => None,
                };
                let (Some(prev), Some(next)) = (int(&f.prev_pid), int(&f.next_pid)) else {
                    return Ok(true);
                };
                let (prev, next) = (prev as i32, next as i32);
                seen_switch = true;
                // The idle task (0) is never off the CPU in this sense.
                if prev != 0 {
                    machine.frames(s, &mut frames)?;
                    let names = frames.iter().map(|fr| unsplit_frame_name(&machine.dsos, fr)).collect();
                    let id = acc.intern(names);
                    let preempted = f
                        .prev_state
                        .as_ref()
                        .and_then(&int)
                        .is_some_and(|st| st & 0xff == 0);
                    // The sample is taken in the task switching out: its pid is prev's.
                    let pid = if s.tid == prev { s.pid } else { prev };
                    acc.unseen_switch_in(machine, prev, s.cpu, time);
                    acc.switch_out(prev, pid, time, id, preempted);
                    acc.anchor(prev, Some((s.event, s.tid, time)));
                }
                if next != 0 {
                    acc.switch_in(machine, next, time);
                }
                acc.switched(s.cpu, time);
            }
            Source::SwitchRecords => {
                if let Some(s) = &item.sample {
                    if s.tid > 0 {
                        machine.stack(s, &mut scratch)?;
                        let slot = last.entry(s.tid).or_default();
                        std::mem::swap(&mut slot.0, &mut scratch);
                        slot.1 = s.time.map(|t| (s.event, s.tid, t));
                    }
                    return Ok(true);
                }
                if ty != RecordType::SWITCH && ty != RecordType::SWITCH_CPU_WIDE {
                    return Ok(true);
                }
                let sample_id = match item.decode()? {
                    RecordBody::Switch(r) => r.sample_id,
                    RecordBody::SwitchCpuWide(r) => r.sample_id,
                    _ => None,
                };
                let (Some(id), Some(time)) = (sample_id, item.time) else {
                    return Err(crate::AnalysisError::unsupported(
                        "switch records without pid/tid and time (record with --switch-events, which samples them)",
                    ));
                };
                let (Some(pid), Some(tid)) = (id.pid, id.tid) else {
                    return Err(crate::AnalysisError::unsupported("switch records without a pid/tid"));
                };
                let (pid, tid) = (pid as i32, tid as i32);
                let cpu = id.cpu;
                seen_switch = true;
                if tid == 0 {
                    acc.switched(cpu, time);
                    return Ok(true);
                }
                let misc = perfdata::types::SwitchMisc(item.rec.header.misc.0);
                if misc.contains(perfdata::types::SwitchMisc::SWITCH_OUT) {
                    let (names, anchor) = match last.get(&tid) {
                        Some((st, anchor)) => {
                            machine.resolve_stack(pid, st, &mut frames);
                            let names = frames.iter().map(|fr| unsplit_frame_name(&machine.dsos, fr)).collect();
                            (names, *anchor)
                        }
                        None => (vec!["[unknown]".to_string()], None),
                    };
                    let id = acc.intern(names);
                    acc.unseen_switch_in(machine, tid, cpu, time);
                    acc.switch_out(tid, pid, time, id, misc.contains(perfdata::types::SwitchMisc::SWITCH_OUT_PREEMPT));
                    acc.anchor(tid, anchor);
                } else {
                    acc.switch_in(machine, tid, time);
                }
                acc.switched(cpu, time);
            }
        }
        Ok(true)
    })?;
    if !seen_switch {
        return Err(crate::AnalysisError::unsupported(match source {
            Source::SchedSwitch => "no sched:sched_switch sample to read switches from",
            Source::SwitchRecords => {
                "no context switches in this recording: record with --switch-events, or -e sched:sched_switch -g"
            }
        }));
    }
    let mut threads: Vec<ThreadOffCpu> = acc.threads.into_values().collect();
    threads.sort_by(|a, b| {
        b.off_cpu_ns
            .cmp(&a.off_cpu_ns)
            .then(a.pid.cmp(&b.pid))
            .then(a.tid.cmp(&b.tid))
    });
    let by_tid: HashMap<i32, (i32, String)> = threads
        .iter()
        .map(|t| (t.tid, (t.pid, t.comm.clone())))
        .collect();
    let mut stacks: Vec<StackOffCpu> = acc
        .stacks
        .into_iter()
        .map(|((tid, id), (ns, n))| {
            let (pid, comm) = by_tid.get(&tid).cloned().unwrap_or((-1, String::new()));
            StackOffCpu {
                pid,
                tid,
                comm,
                frames: acc.stack_list[id as usize].clone(),
                off_cpu_ns: ns,
                intervals: n,
            }
        })
        .collect();
    stacks.sort_by(|a, b| {
        b.off_cpu_ns
            .cmp(&a.off_cpu_ns)
            .then(a.tid.cmp(&b.tid))
            .then_with(|| a.frames.cmp(&b.frames))
    });
    Ok(OffCpu {
        source,
        total_ns: threads.iter().map(|t| t.off_cpu_ns).sum(),
        threads,
        stacks,
        weights: acc.weights,
    })
}

/// The `sched_switch` fields of the RAW data's format (found once per tracepoint id);
/// `None` for a format without them.
fn switch_fields(
    formats: &Formats,
    raw: &[u8],
    cache: &mut HashMap<u16, Option<SwitchFields>>,
) -> Option<SwitchFields> {
    let format = formats.format_of(raw)?;
    cache
        .entry(format.id)
        .or_insert_with(|| {
            let find = |n: &str| format.fields.iter().find(|f| f.name == n).cloned();
            Some(SwitchFields {
                prev_pid: find("prev_pid")?,
                prev_state: find("prev_state"),
                next_pid: find("next_pid")?,
            })
        })
        .clone()
}

/// The off-CPU folded stacks, `comm;root;…;leaf` → nanoseconds: the input of an
/// off-CPU flame graph. `include_tid` appends `-PID/TID` to the command (inferno's
/// `--tid`).
pub fn folded(o: &OffCpu, include_tid: bool) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for s in &o.stacks {
        let mut line = s.comm.replace(' ', "_");
        if include_tid {
            let _ = write!(line, "-{}/{}", s.pid, s.tid);
        }
        for f in s.frames.iter().rev() {
            line.push(';');
            line.push_str(f);
        }
        *out.entry(line).or_insert(0) += s.off_cpu_ns;
    }
    out
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// The off-CPU table: per thread (milliseconds, intervals, of which preempted), then
/// per thread and stack at switch-out, leaf first, with its share of the thread's time.
pub fn render(o: &OffCpu) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Off-CPU time (switch-out to switch-in) from {}: {} ms in {} threads",
        o.source.name(),
        ms(o.total_ns),
        o.threads.len()
    );
    let unseen: u64 = o.threads.iter().map(|t| t.unseen_switch_ins).sum();
    if unseen > 0 {
        let slack: u64 = o.threads.iter().map(|t| t.unseen_slack_ns).sum();
        let _ = writeln!(
            s,
            "# {unseen} switch-ins not in the recording: those intervals end at the CPU's \
             last switch before the thread's next switch-out (as perf sched timehist), \
             and may be up to {} ms longer in all",
            ms(slack)
        );
    }
    s.push_str("#\n");
    let comm_w = o
        .threads
        .iter()
        .map(|t| t.comm.chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    let _ = writeln!(
        s,
        "# {:>12}  {:>9}  {:>14}  {:>7}  {:>7}  Command",
        "Off-CPU (ms)", "Intervals", "Preempted (ms)", "Pid", "Tid"
    );
    let _ = writeln!(
        s,
        "# {}  {}  {}  {}  {}  {}",
        ".".repeat(12),
        ".".repeat(9),
        ".".repeat(14),
        ".".repeat(7),
        ".".repeat(7),
        ".".repeat(comm_w)
    );
    s.push_str("#\n");
    for t in &o.threads {
        let _ = writeln!(
            s,
            "  {:>12}  {:>9}  {:>14}  {:>7}  {:>7}  {}",
            ms(t.off_cpu_ns),
            t.intervals,
            ms(t.preempted_ns),
            t.pid,
            t.tid,
            t.comm
        );
    }
    s.push_str("\n# Off-CPU time per stack at switch-out (leaf first)\n#\n");
    let thread_total: HashMap<i32, u64> = o.threads.iter().map(|t| (t.tid, t.off_cpu_ns)).collect();
    for st in &o.stacks {
        let of = thread_total.get(&st.tid).copied().unwrap_or(0);
        let share = if of == 0 {
            0.0
        } else {
            st.off_cpu_ns as f64 * 100.0 / of as f64
        };
        let _ = writeln!(
            s,
            "  {:>12} ms  {:>6.2}% of {}/{} {}  ({} intervals)",
            ms(st.off_cpu_ns),
            share,
            st.pid,
            st.tid,
            st.comm,
            st.intervals
        );
        for f in &st.frames {
            let _ = writeln!(s, "                 {f}");
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dsos, SymbolSources};

    #[test]
    fn intervals_run_from_switch_out_to_the_next_switch_in() {
        let m = Machine::new(Dsos::new(SymbolSources::default()));
        let mut acc = Acc::default();
        let a = acc.intern(vec!["schedule".into(), "read".into()]);
        let b = acc.intern(vec!["schedule".into(), "nanosleep".into()]);
        assert_eq!(acc.intern(vec!["schedule".into(), "read".into()]), a);
        // A switch-in with no switch-out before it (the recording started while the
        // thread was off the CPU) counts nothing.
        acc.switch_in(&m, 7, 50);
        acc.switch_out(7, 7, 100, a, false);
        acc.switch_in(&m, 7, 130);
        // A second switch-out before any switch-in replaces the first (its switch-in
        // was not seen, and no CPU says when it was): the interval starts at the later
        // one.
        acc.switch_out(7, 7, 200, b, false);
        acc.switch_out(7, 7, 250, b, true);
        acc.switch_in(&m, 7, 300);
        // Still out at the end: not counted.
        acc.switch_out(7, 7, 400, a, false);
        let t = &acc.threads[&7];
        assert_eq!((t.off_cpu_ns, t.intervals), (30 + 50, 2));
        assert_eq!(t.preempted_ns, 50);
        assert_eq!((t.first_interval_ns, t.last_interval_ns), (30, 50));
        assert_eq!(acc.stacks[&(7, a)], (30, 1));
        assert_eq!(acc.stacks[&(7, b)], (50, 1));
    }

    #[test]
    fn a_switch_in_the_recording_lacks_ends_at_the_cpus_last_switch() {
        let m = Machine::new(Dsos::new(SymbolSources::default()));
        let mut acc = Acc::default();
        let a = acc.intern(vec!["schedule".into()]);
        // Thread 7 goes out on CPU 1 at 100; another thread switches on CPU 1 at 140
        // (the CPU going idle); 7 comes in unseen and goes out again at 190.
        acc.unseen_switch_in(&m, 7, Some(1), 100);
        acc.switch_out(7, 7, 100, a, false);
        acc.switched(Some(1), 100);
        acc.switched(Some(1), 140);
        acc.unseen_switch_in(&m, 7, Some(1), 190);
        acc.switch_out(7, 7, 190, a, false);
        acc.switched(Some(1), 190);
        let t = &acc.threads[&7];
        assert_eq!((t.off_cpu_ns, t.intervals), (40, 1));
        assert_eq!((t.unseen_switch_ins, t.unseen_slack_ns), (1, 50));
        // Its own switch-out is the CPU's last switch: nothing to infer (a per-task
        // recording, which sees no switch-in, counts nothing).
        acc.unseen_switch_in(&m, 7, Some(1), 230);
        acc.switch_out(7, 7, 230, a, false);
        assert_eq!(acc.threads[&7].intervals, 1);
        // No CPU in the samples: nothing inferred either.
        acc.unseen_switch_in(&m, 7, None, 260);
        assert_eq!(acc.threads[&7].intervals, 1);
    }
}
