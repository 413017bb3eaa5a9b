//! "Where did the time go?": the records of a recording replayed in time order against
//! the state of its processes ([`machine`]), samples resolved to shared objects and
//! functions in-process ([`dso`], [`symbols`]: the `object` and `addr2line` crates, no
//! external `addr2line`), and the analyses built on that: [`report`] (perf report's
//! table), [`collapse`] (folded stacks for flame graphs), [`stats`] (readperf's CSVs),
//! [`info`] (one screen about a file) and the Parquet export (`parquet`, feature
//! `parquet`). Progress is reported through a callback ([`Analyzer::on_progress`]).
//!
//! ```
//! use perfdata_analysis::{Analyzer, AnalyzerOptions};
//! use perfdata::Recording;
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/fixtures/callchain.data");
//! let recording = Recording::open(path)?;
//! let mut analyzer = Analyzer::open(&recording, &AnalyzerOptions::default())?;
//! let mut frames = vec![];
//! let mut deepest = 0;
//! analyzer.run(&mut |machine, item| {
//!     if let Some(s) = &item.sample {
//!         machine.frames(s, &mut frames)?;         // leaf first, context markers removed
//!         deepest = deepest.max(frames.len());
//!     }
//!     Ok(true)
//! })?;
//! assert!(deepest > 1);
//! # Ok::<(), perfdata::rt::Error>(())
//! ```

#![warn(missing_docs)]

pub mod collapse;
pub mod dso;
pub mod filter;
#[cfg(feature = "gperftools")]
pub mod gperftools;
pub mod info;
pub mod machine;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod report;
mod stack;
pub mod stats;
mod stitch;
pub mod symbol_sources;
pub mod symbols;
pub mod unwind;
pub mod unwound;

pub use dso::{DsoId, Dsos, SymbolSources};
pub use machine::{Frame, Machine, SideEvent, TRUNCATED};
pub use stack::{Stack, StackOptions};

use perfdata::rt::{static_endian, Error};
use perfdata::types::{
    EventUpdateData, FeatureBody, ReadValues, RecordBody, RecordType, SampleType, SampleView,
};
use perfdata::RawRecord;
use perfdata::RecordWalk;
use perfdata::{Origin, PerfData, Place, RecordCtx, Recording};
use std::collections::HashMap;
use std::path::PathBuf;

/// Where kernel and user symbols come from (the CLI's `--kallsyms`, `--vmlinux`,
/// `--inline`, `--symfs`-like options), and how stacks are put together.
#[derive(Debug, Clone, Default)]
pub struct AnalyzerOptions {
    /// Where user stacks come from (recorded callchains, or unwinding) and their depth.
    pub stacks: StackOptions,
    /// Use this kallsyms file for the kernel (else: the build-id cache's copy, or this
    /// machine's `/proc/kallsyms` when the recording comes from this kernel).
    pub kallsyms: Option<PathBuf>,
    /// Use this vmlinux image for the kernel.
    pub vmlinux: Option<PathBuf>,
    /// Read DWARF line tables (source files, inline frames).
    pub lines: bool,
    /// Do not read any symbol file (addresses only).
    pub no_symbols: bool,
    /// perf's build-id cache (default: `$PERF_BUILDID_DIR`, else `~/.debug`, as perf).
    pub build_id_dir: Option<PathBuf>,
    /// `perf archive` tarballs to read objects from, in place (`--symbols-from`).
    pub symbols_from: Vec<PathBuf>,
    /// The recording machine's root file system, copied here (perf's `--symfs`).
    pub symfs: Option<PathBuf>,
    /// Debug-file directories searched before `/usr/lib/debug` (`--debug-file-directory`).
    pub debug_file_dirs: Vec<PathBuf>,
    /// Which samples [`Analyzer::run`] delivers (perf's `--pid`, `--cpu`, `--time`…).
    pub filter: filter::SampleFilter,
}

/// A sample with the fields the analyses use, ready for [`Machine::frames`].
#[derive(Debug, Clone, Copy)]
pub struct SampleInfo<'a> {
    /// Index of its attr (event) in the recording.
    pub event: usize,
    /// PERF_SAMPLE_TIME, in nanoseconds of the recording's clock; `None` when the event
    /// does not sample it.
    pub time: Option<u64>,
    /// Process id; -1 when the event does not sample PERF_SAMPLE_TID.
    pub pid: i32,
    /// Thread id; -1 when the event does not sample PERF_SAMPLE_TID.
    pub tid: i32,
    /// PERF_SAMPLE_CPU; `None` when the event does not sample it.
    pub cpu: Option<u32>,
    /// The sample's period, or the attr's when the sample has none (as perf does).
    pub period: u64,
    /// PERF_SAMPLE_IP: the sampled address (0 when the event does not sample it).
    pub ip: u64,
    /// The sample's cpumode is the kernel's.
    pub kernel: bool,
    /// Its event's `sample_regs_user`: which registers its user register dump holds.
    pub regs_user_mask: u64,
    /// The recording's byte order (of the stack copy's words).
    pub endian: perfdata::Endianness,
    /// The whole sample, for the parts not copied here (callchain, registers, stack
    /// copy, read values).
    pub view: SampleView<'a>,
    /// Of a thread, object or symbol the filter leaves out: delivered only when
    /// [`Analyzer::deliver_hidden`] asks for it (`report` counts it in its totals).
    pub hidden: bool,
}

/// One record as [`Analyzer::run`] gives it: replayed against the machine state, with
/// its sample (if it is one) ready for [`Machine::frames`].
#[derive(Clone, Copy)]
pub struct Replayed<'a> {
    /// The recording's parsed main file: attrs, features, and what decodes records.
    pub data: &'a PerfData<'a>,
    /// Which file of a `--threads` directory the record is in ([`Place::Main`] otherwise).
    pub place: Place,
    /// Whether the record was in the input itself or decompressed from a COMPRESSED one.
    pub origin: Origin,
    /// The record, undecoded ([`Replayed::decode`] decodes it).
    pub rec: &'a RawRecord<'a>,
    /// Its attr and what decoding it needs.
    pub ctx: &'a RecordCtx,
    /// The record's timestamp (SAMPLE's `time` or the sample_id trailer's), in
    /// nanoseconds; `None` when it has none.
    pub time: Option<u64>,
    /// `Some` for a SAMPLE record (one per counter read for PERF_SAMPLE_READ samples,
    /// see [`Analyzer::expand_read`]).
    pub sample: Option<SampleInfo<'a>>,
}

/// A recording opened for analysis: events named, build ids known, kernel symbols chosen.
pub struct Analyzer<'r> {
    recording: &'r Recording,
    /// The recording's main file parsed: header, attrs, features.
    pub data: PerfData<'r>,
    /// The processes' state at the current point of [`Analyzer::run`]; after it, as the
    /// last stream walked left it.
    pub machine: Machine,
    /// Event names by attr index (a pipe's EVENT_UPDATE names applied).
    pub events: Vec<String>,
    progress: Option<ProgressReport<'r>>,
    /// perf's per-id counter values of PERF_SAMPLE_READ samples (periods are deltas).
    last_read: HashMap<u64, u64>,
    /// A PERF_SAMPLE_READ sample is delivered once per counter it read (as perf
    /// reports them); off, once as it is (for rewriting a recording).
    pub expand_read: bool,
    /// The sample filter, resolved against the recording; `None` selects everything.
    filter: Option<filter::ResolvedFilter>,
    /// Deliver the samples the filter hides, marked [`SampleInfo::hidden`] (off: they
    /// are not delivered, as `perf script` prints nothing for them).
    pub deliver_hidden: bool,
}

/// How far [`Analyzer::run`] has come: bytes of the recording walked, of the total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Offset of the record being walked, in bytes.
    pub done: u64,
    /// Size of the recording in bytes: its file, plus every `data.N` stream of a
    /// directory.
    pub total: u64,
}

/// The progress callback and how often it is called.
struct ProgressReport<'r> {
    total: u64,
    records: u64,
    report: Box<dyn FnMut(Progress) + 'r>,
}

impl ProgressReport<'_> {
    #[inline]
    fn tick(&mut self, position: u64) {
        self.records += 1;
        // A call every 8192 records: often enough for a bar, too rarely to cost anything.
        if self.records & 8191 == 0 {
            (self.report)(Progress {
                done: position,
                total: self.total,
            });
        }
    }
}

impl<'r> Analyzer<'r> {
    /// Opens a recording for analysis: build ids, host and architecture from its features,
    /// event names, kernel symbols as `opts` chooses; nothing is replayed yet. A pipe's
    /// event names and architecture come from its leading records (its other header
    /// records are applied as [`Analyzer::run`] meets them).
    pub fn open(recording: &'r Recording, opts: &AnalyzerOptions) -> Result<Self, Error> {
        let data = recording.data()?;
        let mut sources = SymbolSources {
            lines: opts.lines,
            vmlinux: opts.vmlinux.clone(),
            ..SymbolSources::default()
        };
        if let Some(d) = &opts.build_id_dir {
            sources.build_id_cache = Some(d.clone());
        }
        sources.archives = opts.symbols_from.clone();
        sources.symfs = opts.symfs.clone();
        sources.debug_dirs = opts.debug_file_dirs.clone();
        let mut beside = recording.path().as_os_str().to_owned();
        beside.push(".debug");
        sources.recording_cache = Some(PathBuf::from(beside)).filter(|p| p.is_dir());
        if opts.no_symbols {
            sources.read_files = false;
        }
        let mut build_ids = vec![];
        let (mut hostname, mut osrelease, mut arch) = (None, None, None);
        for f in &data.features {
            match data.feature(f) {
                Ok(FeatureBody::BuildId(b)) => {
                    for e in &b.entries {
                        let n = if e.misc.0 & 0x8000 != 0 {
                            usize::from(e.build_id_size)
                        } else {
                            20
                        };
                        let id = e.build_id[..n.min(e.build_id.len())].to_vec();
                        build_ids.push((e.filename.to_str_lossy().into_owned(), id));
                    }
                }
                Ok(FeatureBody::Hostname(h)) => {
                    hostname = Some(h.value.text.to_str_lossy().into_owned())
                }
                Ok(FeatureBody::Osrelease(o)) => {
                    osrelease = Some(o.value.text.to_str_lossy().into_owned())
                }
                Ok(FeatureBody::Arch(a)) => {
                    arch = unwind::Arch::from_uname(&a.value.text.to_str_lossy())
                }
                _ => {}
            }
        }
        let mut dsos = Dsos::new(sources);
        if opts.no_symbols {
            dsos.set_kernel_choice(None, "none (--no-symbols)".into());
        } else if let Some(k) = &opts.kallsyms {
            dsos.set_kernel_choice(Some(k.clone()), format!("{} (--kallsyms)", k.display()));
        } else if let Some(v) = &opts.vmlinux {
            dsos.set_kernel_choice(None, format!("{} (--vmlinux)", v.display()));
        }
        dsos.host.hostname = hostname;
        dsos.host.osrelease = osrelease;
        for (name, id) in build_ids {
            dsos.note_build_id(&name, id);
        }
        let mut events = perfdata::events::event_names(&data);
        if data.format.layout == perfdata::Layout::Pipe {
            // Pipe mode names its events with EVENT_UPDATE records at the start of the
            // stream: read them before the first sample, so names are known up front.
            let mut dsos_unused = Dsos::new(SymbolSources::default());
            data.for_each_record(&mut |_, rec, ctx| {
                if rec.record_type() == RecordType::SAMPLE {
                    return Ok(false);
                }
                note_header_record(&data, &rec, ctx, &mut dsos_unused, &mut events)?;
                // And the architecture, which says what sampled registers mean.
                if rec.record_type() == RecordType::HEADER_FEATURE {
                    if let RecordBody::HeaderFeature(h) = data.decode(&rec, ctx)? {
                        if let Some(FeatureBody::Arch(a)) = h.data.as_deref() {
                            arch = unwind::Arch::from_uname(&a.value.text.to_str_lossy());
                        }
                    }
                }
                Ok(true)
            })?;
        }
        let mut machine = Machine::new(dsos);
        // A recording that does not say (older perf) is taken to be from this machine's
        // architecture, as perf does.
        machine.set_stacks(opts.stacks, arch.or_else(unwind::Arch::host));
        let filter = if opts.filter.is_empty() {
            None
        } else {
            // perf: "File does not contain CPU events. Remove -C option to proceed."
            if opts.filter.cpus.is_some() {
                if let Some((i, _)) = data
                    .session
                    .attrs
                    .iter()
                    .enumerate()
                    .find(|(_, a)| !a.attr.sample_type.contains(SampleType::CPU))
                {
                    return Err(Error::other(format!(
                        "--cpu: event `{}` does not sample the CPU (PERF_SAMPLE_CPU)",
                        events.get(i).map_or("?", |e| e.as_str())
                    )));
                }
            }
            let span = sample_time_span(recording, &data)?;
            Some(opts.filter.resolve(span).map_err(Error::other)?)
        };
        Ok(Analyzer {
            recording,
            data,
            machine,
            events,
            progress: None,
            last_read: HashMap::new(),
            expand_read: true,
            filter,
            deliver_hidden: false,
        })
    }

    /// Calls `report` during [`Analyzer::run`] with how far it has come (every few
    /// thousand records), and once more at the end with `done == total`.
    pub fn on_progress(&mut self, report: impl FnMut(Progress) + 'r) {
        let total = self.recording.header_bytes().len() as u64
            + (0..self.recording.stream_paths().count())
                .map(|i| self.recording.stream_bytes(i).len() as u64)
                .sum::<u64>();
        self.progress = Some(ProgressReport {
            total,
            records: 0,
            report: Box::new(report),
        });
    }

    /// The recording this analyzer reads.
    pub fn recording(&self) -> &'r Recording {
        self.recording
    }

    /// Where kernel symbols come from, and why (for `info`).
    pub fn kernel_symbols(&self) -> String {
        self.machine.dsos.kernel_choice().1
    }

    /// Calls `f` for every record in time order, after the side-band records before it
    /// have updated the machine. A `--threads` directory: the side band of every stream
    /// is collected first and replayed, in time order, while each stream is walked.
    pub fn run(
        &mut self,
        f: &mut dyn FnMut(&Machine, &Replayed<'_>) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let data = &self.data;
        let machine = &mut self.machine;
        let progress = &mut self.progress;
        let last_read = &mut self.last_read;
        let expand_read = self.expand_read;
        let filter = Filtering {
            filter: self.filter.as_ref(),
            deliver_hidden: self.deliver_hidden,
        };
        let events = &mut self.events;
        machine.reset();
        last_read.clear();
        let result = if !self.recording.is_directory() {
            // The hot loop of every analysis: the walk in a compile-time byte order.
            static_endian!(data.format.endian, |e| data
                .records_as(e)
                .time_ordered()
                .for_each(|origin, rec, ctx| {
                    if let Some(p) = progress.as_mut() {
                        p.tick(rec.offset);
                    }
                    let item = item(data, Place::Main, origin, &rec, ctx)?;
                    if let Some(ev) = side_event(data, &rec, ctx)? {
                        machine.apply(&ev);
                    }
                    note_header_record(data, &rec, ctx, &mut machine.dsos, events)?;
                    deliver(machine, &item, last_read, expand_read, filter, &mut *f)
                }))
        } else {
            self.run_directory(f)
        };
        if let Some(p) = self.progress.as_mut() {
            (p.report)(Progress {
                done: p.total,
                total: p.total,
            });
        }
        result
    }

    fn run_directory(
        &mut self,
        f: &mut dyn FnMut(&Machine, &Replayed<'_>) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let data = &self.data;
        let machine = &mut self.machine;
        let last_read = &mut self.last_read;
        let expand_read = self.expand_read;
        let filter = Filtering {
            filter: self.filter.as_ref(),
            deliver_hidden: self.deliver_hidden,
        };
        // Directory: collect the side band of every stream, then replay it per stream.
        let mut side: Vec<(u64, SideEvent)> = vec![];
        self.recording.for_each_record(&mut |_, _, rec, ctx| {
            if let Some(ev) = side_event(data, &rec, ctx)? {
                side.push((data.time(&rec, ctx).unwrap_or(0), ev));
            }
            Ok(true)
        })?;
        side.sort_by_key(|(t, _)| *t);
        let mut go_on = true;
        let places = std::iter::once(Place::Main)
            .chain((0..self.recording.stream_paths().count()).map(Place::DataFile));
        for place in places {
            if !go_on {
                break;
            }
            machine.reset();
            let mut next = 0;
            let mut visit = |origin: Origin, rec: RawRecord<'_>, ctx: &RecordCtx| {
                let item = item(data, place, origin, &rec, ctx)?;
                let upto = item.time.unwrap_or(0);
                while next < side.len() && side[next].0 <= upto {
                    machine.apply(&side[next].1);
                    next += 1;
                }
                go_on = deliver(machine, &item, last_read, expand_read, filter, f)?;
                Ok(go_on)
            };
            let records = match place {
                Place::Main => data.records(),
                Place::DataFile(i) => data.records_in(self.recording.stream_bytes(i), 0),
            };
            records.time_ordered().for_each(&mut visit)?;
        }
        Ok(())
    }
}

/// The sample filter as [`deliver`] applies it.
#[derive(Clone, Copy)]
struct Filtering<'f> {
    filter: Option<&'f filter::ResolvedFilter>,
    deliver_hidden: bool,
}

impl Filtering<'_> {
    /// Calls `f` with the sample unless the filter drops it (or hides it, and hidden
    /// samples are not wanted); a sample passed on hidden is marked so.
    fn pass(
        self,
        machine: &Machine,
        item: &Replayed<'_>,
        f: &mut dyn FnMut(&Machine, &Replayed<'_>) -> Result<bool, Error>,
    ) -> Result<bool, Error> {
        let (Some(filter), Some(s)) = (self.filter, &item.sample) else {
            return f(machine, item);
        };
        match filter.verdict(machine, s) {
            filter::Verdict::Keep => f(machine, item),
            filter::Verdict::Dropped => Ok(true),
            filter::Verdict::Hidden if !self.deliver_hidden => Ok(true),
            filter::Verdict::Hidden => {
                let hidden = Replayed {
                    sample: Some(SampleInfo { hidden: true, ..*s }),
                    ..*item
                };
                f(machine, &hidden)
            }
        }
    }
}

/// Passes a record on; a sample with PERF_SAMPLE_READ becomes one sample per counter
/// read, each with the counter's change since its last sample as the period (perf's
/// `deliver_sample_value`; a counter that did not move gives none). Samples go through
/// the filter.
fn deliver(
    machine: &mut Machine,
    item: &Replayed<'_>,
    last_read: &mut HashMap<u64, u64>,
    expand_read: bool,
    filter: Filtering<'_>,
    f: &mut dyn FnMut(&Machine, &Replayed<'_>) -> Result<bool, Error>,
) -> Result<bool, Error> {
    let Some(s) = &item.sample else {
        return f(machine, item);
    };
    machine.note_thread(s.pid, s.tid);
    if !expand_read || !item.ctx.sample_type.contains(SampleType::READ) {
        return filter.pass(machine, item, f);
    }
    let Some(read) = s.view.read()? else {
        return filter.pass(machine, item, f);
    };
    let values: Vec<(Option<u64>, u64)> = match read.values {
        ReadValues::Single(v) => vec![(v.id, v.value)],
        ReadValues::Group(g) => g.values.iter().map(|v| (v.id, v.value)).collect(),
    };
    for (id, value) in values {
        let Some(id) = id else { continue };
        let Some(event) = item.data.session.attr_of_id(id) else {
            continue;
        };
        let period = value.wrapping_sub(last_read.insert(id, value).unwrap_or(0));
        if period == 0 {
            continue;
        }
        let one = Replayed {
            sample: Some(SampleInfo {
                event,
                period,
                ..*s
            }),
            ..*item
        };
        if !filter.pass(machine, &one, f)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The first and last sample times: the SAMPLE_TIME feature's (perf's source for
/// `--time` percentages), else a walk over the samples (pipes, older perf); `None`
/// when no sample has a time.
fn sample_time_span(
    recording: &Recording,
    data: &PerfData<'_>,
) -> Result<Option<(u64, u64)>, Error> {
    for f in &data.features {
        if let Ok(FeatureBody::SampleTime(t)) = data.feature(f) {
            if t.first_sample_time != 0 || t.last_sample_time != 0 {
                return Ok(Some((t.first_sample_time, t.last_sample_time)));
            }
        }
    }
    let mut span: Option<(u64, u64)> = None;
    recording.for_each_record(&mut |_, _, rec, ctx| {
        if rec.record_type() == RecordType::SAMPLE {
            if let Some(t) = data.sample(&rec, ctx)?.and_then(|v| v.time()) {
                let (a, b) = span.get_or_insert((t, t));
                *a = (*a).min(t);
                *b = (*b).max(t);
            }
        }
        Ok(true)
    })?;
    Ok(span)
}

/// Pipe mode: build ids, features (host, release) and event names arrive as records.
fn note_header_record(
    data: &PerfData<'_>,
    rec: &RawRecord<'_>,
    ctx: &RecordCtx,
    dsos: &mut Dsos,
    events: &mut [String],
) -> Result<(), Error> {
    let ty = rec.record_type();
    if ty != RecordType::HEADER_BUILD_ID
        && ty != RecordType::HEADER_FEATURE
        && ty != RecordType::EVENT_UPDATE
    {
        return Ok(());
    }
    match data.decode(rec, ctx)? {
        RecordBody::EventUpdate(u) => {
            if let EventUpdateData::Name(n) = &u.data {
                if let Some(e) = data
                    .session
                    .attr_of_id(u.id)
                    .and_then(|i| events.get_mut(i))
                {
                    *e = n.to_str_lossy().into_owned();
                }
            }
        }
        RecordBody::HeaderBuildId(b) => {
            let n = if rec.header.misc.0 & 0x8000 != 0 {
                usize::from(b.build_id_size)
            } else {
                20
            };
            let id = b.build_id[..n.min(b.build_id.len())].to_vec();
            dsos.note_build_id(&b.filename.to_str_lossy(), id);
        }
        RecordBody::HeaderFeature(h) => match h.data.as_deref() {
            Some(FeatureBody::Hostname(v)) => {
                dsos.host.hostname = Some(v.value.text.to_str_lossy().into_owned())
            }
            Some(FeatureBody::Osrelease(v)) => {
                dsos.host.osrelease = Some(v.value.text.to_str_lossy().into_owned())
            }
            _ => {}
        },
        _ => {}
    }
    Ok(())
}

fn side_event(
    data: &PerfData<'_>,
    rec: &RawRecord<'_>,
    ctx: &RecordCtx,
) -> Result<Option<SideEvent>, Error> {
    let ty = rec.record_type();
    if !SideEvent::is_side_band(ty) {
        return Ok(None);
    }
    let body = data.decode(rec, ctx)?;
    Ok(SideEvent::from_record(rec.header.misc.0, &body))
}

fn item<'a>(
    data: &'a PerfData<'a>,
    place: Place,
    origin: Origin,
    rec: &'a RawRecord<'a>,
    ctx: &'a RecordCtx,
) -> Result<Replayed<'a>, Error> {
    let time = data.time(rec, ctx);
    let sample = match data.sample(rec, ctx)? {
        Some(view) => {
            let event = ctx.attr.unwrap_or(0) as usize;
            let attr = data.session.attrs.get(event).map(|a| &a.attr);
            Some(SampleInfo {
                event,
                time: view.time(),
                pid: view.pid().map_or(-1, |p| p as i32),
                tid: view.tid().map_or(-1, |t| t as i32),
                cpu: view.cpu(),
                period: view
                    .period()
                    .or(attr.map(|a| a.sample_period_or_freq))
                    .unwrap_or(1),
                ip: view.ip().unwrap_or(0),
                kernel: rec.header.misc.0 & 7 == 1,
                regs_user_mask: ctx.sample_regs_user,
                endian: data.format.endian,
                view,
                hidden: false,
            })
        }
        None => None,
    };
    Ok(Replayed {
        data,
        place,
        origin,
        rec,
        ctx,
        time,
        sample,
    })
}

impl Replayed<'_> {
    /// The record decoded.
    pub fn decode(&self) -> Result<perfdata::types::RecordBody<'_>, Error> {
        self.data.decode(self.rec, self.ctx)
    }
}
