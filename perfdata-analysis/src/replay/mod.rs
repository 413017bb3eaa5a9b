//! The replay: a recording's records walked in time order against the state of its
//! processes ([`Machine`]), each handed on with its decoded sample ([`SampleInfo`]) after
//! the side-band records before it (maps, comms, JIT code, simpleperf's unwinding
//! records) have been applied. Filters, byte-range partitions and `--threads`
//! directories are handled here, so every analysis sees the same samples.

pub mod filter;
pub mod partition;
mod producer;
mod simpleperf_unwinding;

pub use producer::Producer;

use crate::error::BadOption;
use crate::stack::unwind::Arch;
use crate::symbols::jit;
use crate::{AnalysisError, Dsos, Machine, SampleInfo, SideEvent, StackOptions, SymbolSources};
use perfdata::rt::{static_endian, Endian};
use perfdata::types::{
    BuildIdMisc, CpuMode, EventUpdateData, FeatureBody, ReadValues, RecordBody, RecordType,
    SampleType,
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
    /// jitdump files to name JIT code from (`--jitdump`), besides those the recording
    /// maps ([`jit`]).
    pub jitdumps: Vec<PathBuf>,
    /// Replay the records of one stream only ([`Analyzer::streams`]; the side band of
    /// every stream still names processes and maps): a `--threads` directory read in
    /// parallel, one stream per worker. `None`: every stream.
    pub stream: Option<usize>,
    /// Deliver only the samples whose records lie in these bytes of the recording's
    /// file, `start..end` (a record inside compressed records counts at its compressed
    /// record's offset): one part of a large file read in parallel, one part per worker
    /// ([`partition::byte_ranges`]). Every record before and after still updates the
    /// processes and maps. `None`: every sample. Not for `--threads` directories.
    pub byte_range: Option<(u64, u64)>,
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
    /// see [`RunOptions::expand_read`]).
    pub sample: Option<SampleInfo<'a>>,
}

/// The switches of one [`Analyzer::run`]: what a walk delivers, chosen per walk so that
/// one analyzer serves several analyses without one's choice leaking into the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// A PERF_SAMPLE_READ sample is delivered once per counter it read, with the
    /// counter's change as its period (as perf reports them; the default); off, once as
    /// it is (for rewriting a recording).
    pub expand_read: bool,
    /// Apply the analyzer's sample filter (the default); off, every sample is delivered:
    /// a walk that needs every thread's samples (the off-CPU intervals) before a
    /// filtered one.
    pub filtered: bool,
    /// Deliver the samples the filter hides, marked [`SampleInfo::hidden`] (`report`
    /// counts them in its totals); off (the default), they are not delivered, as
    /// `perf script` prints nothing for them.
    pub deliver_hidden: bool,
    /// Deliver the records in the order the file has them, not in time order (perf
    /// script's `--show-round-events`, which turns perf's ordering off). Not for
    /// `--threads` directories, whose streams are always merged in time order.
    pub file_order: bool,
    /// A `--threads` directory's streams delivered merged in time order, as perf reads
    /// them (perf script prints every record in one timeline); off (the default), stream
    /// after stream, each in time order, which is all that sums over samples need.
    pub merge_streams: bool,
    /// A file's records put in time order on another thread, which hands them over in
    /// batches, while this one replays them and calls the callback: for a callback that
    /// costs as much as the walk (a Python host's handlers), the two share the cores.
    /// Off (the default) for walks that keep both cores busy already or that are
    /// measured on one. Not for the file's order or a `--threads` directory (walked as
    /// without it).
    pub ordering_thread: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            expand_read: true,
            filtered: true,
            deliver_hidden: false,
            file_order: false,
            merge_streams: false,
            ordering_thread: false,
        }
    }
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
    /// The sample filter, resolved against the recording; `None` selects everything.
    filter: Option<filter::ResolvedFilter>,
    /// The JIT code of jitdump files, applied as the replay goes.
    jit: jit::JitDumps,
    /// [`AnalyzerOptions::stream`].
    stream: Option<usize>,
    /// [`AnalyzerOptions::byte_range`].
    byte_range: Option<(u64, u64)>,
    /// Notes from opening the recording (recorded symbols that could not be read).
    open_notes: Vec<String>,
    /// Notes from the last [`Analyzer::run`] (runs of SPLIT records that made no record).
    run_notes: Vec<String>,
    /// simpleperf's CALLCHAIN records waiting for their samples, and its UNWINDING_RESULT
    /// records counted, in the last [`Analyzer::run`].
    unwinding: simpleperf_unwinding::SimpleperfUnwinding,
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

    /// The walk is over: the bar reaches its end.
    fn finish(&mut self) {
        (self.report)(Progress {
            done: self.total,
            total: self.total,
        });
    }
}

/// The analyzer's note for each record that SPLIT records held and never completed.
fn unjoined_notes(unjoined: &[perfdata::Error]) -> impl Iterator<Item = String> + '_ {
    unjoined
        .iter()
        .map(|e| format!("{e}: the record these SPLIT records held is left out"))
}

impl<'r> Analyzer<'r> {
    /// Opens a recording for analysis: build ids, host and architecture from its features,
    /// event names, kernel symbols as `opts` chooses; nothing is replayed yet. A pipe's
    /// event names and architecture come from its leading records (its other header
    /// records are applied as [`Analyzer::run`] meets them).
    pub fn open(recording: &'r Recording, opts: &AnalyzerOptions) -> Result<Self, AnalysisError> {
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
                        let n = if e.misc.contains(BuildIdMisc::BUILD_ID_SIZE) {
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
                Ok(FeatureBody::Arch(a)) => arch = Arch::from_uname(&a.value.text.to_str_lossy()),
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
        // A simpleperf recording carries the symbols of the files its samples hit.
        let (recorded, mut open_notes) = crate::symbols::recorded::recorded_files(&data);
        for file in recorded {
            dsos.note_recorded_file(file);
        }
        // And the kallsyms of the recording machine (a KERNEL_SYMBOL record).
        let (kallsyms, notes) = crate::symbols::recorded::recorded_kallsyms(&data);
        open_notes.extend(notes);
        if let Some(kallsyms) = kallsyms {
            dsos.note_recorded_kallsyms(kallsyms);
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
                            arch = Arch::from_uname(&a.value.text.to_str_lossy());
                        }
                    }
                }
                Ok(true)
            })?;
        }
        let mut machine = Machine::new(dsos);
        // A recording that does not say (older perf) is taken to be from this machine's
        // architecture, as perf does.
        machine.set_stacks(opts.stacks, arch.or_else(Arch::host));
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
                    return Err(BadOption::new(
                        "--cpu",
                        format!(
                            "event `{}` does not sample the CPU (PERF_SAMPLE_CPU)",
                            events.get(i).map_or("?", |e| e.as_str())
                        ),
                    )
                    .into());
                }
            }
            let span = sample_time_span(recording, &data)?;
            Some(opts.filter.resolve(span)?)
        };
        // perf uses a jitdump only when every event was recorded on CLOCK_MONOTONIC, the
        // producers' clock (`perf record -k mono`): its timestamps are the records'.
        let monotonic = !data.session.attrs.is_empty()
            && data.session.attrs.iter().all(|a| {
                a.attr.attr_flags.use_clockid()
                    && a.attr.clockid == Some(perfdata::types::PosixClock::MONOTONIC)
            });
        let jit = jit::JitDumps::new(&opts.jitdumps, recording.path(), monotonic);
        if opts.byte_range.is_some() && recording.is_directory() {
            return Err(BadOption::new(
                "byte_range",
                "a byte range selects samples of one file: a --threads directory is read in parts by stream",
            )
            .into());
        }
        let streams = stream_count(recording);
        if let Some(s) = opts.stream.filter(|&s| s >= streams) {
            return Err(BadOption::new(
                "stream",
                format!(
                    "stream {s}: the recording has {streams} (0: the main file's records{})",
                    if streams > 1 {
                        ", 1…: its data.N files"
                    } else {
                        ""
                    }
                ),
            )
            .into());
        }
        Ok(Analyzer {
            recording,
            data,
            machine,
            events,
            progress: None,
            last_read: HashMap::new(),
            filter,
            jit,
            stream: opts.stream,
            byte_range: opts.byte_range,
            open_notes,
            run_notes: vec![],
            unwinding: Default::default(),
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

    /// How many streams of records the recording has: 1 for a file; for a `--threads`
    /// directory, its main file's (stream 0) and each `data.N` file's (1, 2, …).
    pub fn streams(&self) -> usize {
        stream_count(self.recording)
    }

    /// The recording this analyzer reads.
    pub fn recording(&self) -> &'r Recording {
        self.recording
    }

    /// What a user should know about the recording and the last [`Analyzer::run`] that
    /// did not stop it: a jitdump the recording maps but that was not found or not used,
    /// and why; recorded symbols that could not be read; a run of SPLIT records that made
    /// no record (its record is left out, the rest is read); the samples simpleperf could
    /// not unwind when recording, and simpleperf CALLCHAIN records no sample took.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = self.open_notes.clone();
        notes.extend(self.run_notes.iter().cloned());
        notes.extend(self.unwinding.notes());
        notes.extend(self.jit.notes().iter().cloned());
        notes
    }

    /// Where kernel symbols come from, and why (for `info`).
    pub fn kernel_symbols(&self) -> String {
        self.machine.dsos.kernel_choice().1
    }

    /// Calls `f` for every record in time order, after the side-band records before it
    /// have updated the machine; `f` returns whether to go on. A `--threads` directory:
    /// the side band of every stream is collected first and replayed, in time order,
    /// while each stream is walked.
    ///
    /// `f`'s error type is the caller's (ripgrep's `Sink` is the model): any type an
    /// [`AnalysisError`] converts into; an error from `f` ends the walk and is returned
    /// as it is.
    pub fn run<E, F>(&mut self, opts: RunOptions, mut f: F) -> Result<(), E>
    where
        E: From<AnalysisError>,
        F: FnMut(&Machine, &Replayed<'_>) -> Result<bool, E>,
    {
        let mut failed = None;
        let mut sink = |m: &Machine, item: &Replayed<'_>| match f(m, item) {
            Ok(go_on) => go_on,
            Err(e) => {
                failed = Some(e);
                false
            }
        };
        let walked = self.walk(opts, &mut sink);
        if let Some(p) = self.progress.as_mut() {
            p.finish();
        }
        match failed {
            Some(e) => Err(e),
            None => walked.map_err(E::from),
        }
    }

    /// Calls `f` for every record of a file in time order, as [`Analyzer::run`] delivers
    /// them, but not replayed: no machine state (the analyzer's stays as it is), no
    /// filter, no kernel symbols read ahead, each sample once as it is (a
    /// PERF_SAMPLE_READ sample is not expanded) and without simpleperf's user frames.
    /// For a view that keeps its own account of the side band and resolves no address
    /// (perf sched's), the replay is most of a walk's cost. `f` returns whether to go on.
    ///
    /// The records are put in time order on another thread, which hands them over in
    /// batches (where they are, not their bytes): the ordering and `f` share the two
    /// cores. A `--threads` directory is refused (its streams need the merge `run` does).
    pub fn run_unreplayed<E, F>(&mut self, mut f: F) -> Result<(), E>
    where
        E: From<AnalysisError>,
        F: FnMut(&Replayed<'_>) -> Result<bool, E>,
    {
        if self.recording.is_directory() {
            return Err(E::from(
                BadOption::new(
                    "run_unreplayed",
                    "a --threads directory's streams are walked by run",
                )
                .into(),
            ));
        }
        self.run_notes.clear();
        let mut failed = None;
        let data = &self.data;
        let (progress, events) = (&mut self.progress, &mut self.events);
        let dsos = &mut self.machine.dsos;
        let ahead = self.recording.populate_ahead();
        let (walked, unjoined) = time_ordered_elsewhere(data, ahead, |origin, rec, ctx| {
            if let Some(p) = progress.as_mut() {
                p.tick(rec.offset);
            }
            let go_on = note_header_record(data, rec, ctx, dsos, events)
                .and_then(|()| item(data.format.endian, data, Place::Main, origin, rec, ctx));
            let go_on = match go_on {
                Ok(item) => f(&item),
                Err(e) => Err(E::from(e.into())),
            };
            go_on.unwrap_or_else(|e| {
                failed = Some(e);
                false
            })
        })
        .map_err(E::from)?;
        self.run_notes.extend(unjoined_notes(&unjoined));
        if let Some(p) = self.progress.as_mut() {
            p.finish();
        }
        match failed {
            Some(e) => Err(e),
            None => walked.map_err(|e| E::from(e.into())),
        }
    }

    /// [`Analyzer::run`]'s walk, with the caller's callback behind one non-generic sink.
    fn walk(&mut self, opts: RunOptions, sink: &mut Sink<'_>) -> Result<(), AnalysisError> {
        // The kernel's symbols load on another thread while the walk starts.
        if (self.data.session.attrs.iter()).any(|a| !a.attr.attr_flags.exclude_kernel()) {
            self.machine.dsos.read_ahead(false);
        }
        self.machine.reset();
        self.jit.reset();
        self.unwinding.reset();
        self.last_read.clear();
        self.run_notes.clear();
        let mut replay = Replay {
            data: &self.data,
            machine: &mut self.machine,
            last_read: &mut self.last_read,
            unwinding: &mut self.unwinding,
            expand_read: opts.expand_read,
            filter: Filtering {
                filter: self.filter.as_ref().filter(|_| opts.filtered),
                deliver_hidden: opts.deliver_hidden,
                byte_range: self.byte_range,
            },
            sink,
        };
        if self.recording.is_directory() {
            let merge = opts.merge_streams && self.stream.is_none();
            return walk_directory(
                &mut replay,
                self.recording,
                &mut self.jit,
                self.stream,
                merge,
            );
        }
        let (progress, jit, events) = (&mut self.progress, &mut self.jit, &mut self.events);
        // Each way of walking is a function of its own, out of line: the time-ordered
        // walk is the one hot loop of every analysis, and a loop that shared its function
        // with another way cost report a tenth of its time.
        if opts.file_order {
            // perf script's --show-round-events: the file's order.
            let (walked, unjoined) = walk_file_order(&mut replay, progress, jit, events);
            self.run_notes.extend(unjoined_notes(&unjoined));
            return walked.map_err(AnalysisError::from);
        }
        if opts.ordering_thread {
            let ahead = self.recording.populate_ahead();
            let (walked, unjoined) =
                walk_ordered_elsewhere(&mut replay, ahead, progress, jit, events)?;
            self.run_notes.extend(unjoined_notes(&unjoined));
            return walked;
        }
        // The pages ahead are mapped on another thread.
        let ahead = self.recording.populate_ahead();
        let (walked, unjoined) = walk_time_ordered(&mut replay, ahead, progress, jit, events);
        self.run_notes.extend(unjoined_notes(&unjoined));
        walked.map_err(AnalysisError::from)
    }
}

/// A record put in time order by the ordering thread (`time_ordered_elsewhere`): where
/// its bytes are in the input, or a copy of them when they are not there (decompressed
/// or joined records, whose buffers move on). Its context is not carried: the walks of
/// [`PerfData::records`] give every record `session.ctx_of(attr, header.misc)`, which
/// the receiving side puts together again (a tenth of the bytes handed over).
struct Ordered {
    origin: Origin,
    offset: u64,
    header: perfdata::types::EventHeader,
    /// [`RecordCtx::attr`], `u32::MAX` for none.
    attr: u32,
    bytes: OrderedBytes,
}

enum OrderedBytes {
    /// Where the body and the payload are in the input, and their lengths.
    Input {
        body: usize,
        payload: usize,
        body_len: u32,
        payload_len: u32,
    },
    /// The body then the payload, and the body's length.
    Copied(Box<(Box<[u8]>, usize)>),
}

impl Ordered {
    /// Records per batch handed over (a few batches are in flight: bounded memory).
    const BATCH: usize = 4096;

    #[inline]
    fn new(input: &[u8], origin: Origin, rec: &RawRecord<'_>, ctx: &RecordCtx) -> Ordered {
        let within = |s: &[u8]| {
            if s.is_empty() {
                // An empty slice may point anywhere.
                return Some((0, 0));
            }
            let at = (s.as_ptr() as usize).wrapping_sub(input.as_ptr() as usize);
            let len = u32::try_from(s.len()).ok()?;
            (at <= input.len() && s.len() <= input.len() - at).then_some((at, len))
        };
        let bytes = match (within(rec.body), within(rec.payload)) {
            (Some((body, body_len)), Some((payload, payload_len))) => OrderedBytes::Input {
                body,
                payload,
                body_len,
                payload_len,
            },
            _ => OrderedBytes::Copied(Box::new((
                [rec.body, rec.payload].concat().into(),
                rec.body.len(),
            ))),
        };
        Ordered {
            origin,
            offset: rec.offset,
            header: rec.header,
            attr: ctx.attr.unwrap_or(u32::MAX),
            bytes,
        }
    }

    #[inline]
    fn record<'a>(&'a self, input: &'a [u8]) -> RawRecord<'a> {
        let (body, payload) = match &self.bytes {
            &OrderedBytes::Input {
                body,
                payload,
                body_len,
                payload_len,
            } => (
                &input[body..body + body_len as usize],
                &input[payload..payload + payload_len as usize],
            ),
            OrderedBytes::Copied(copy) => copy.0.split_at(copy.1),
        };
        RawRecord {
            offset: self.offset,
            header: self.header,
            body,
            payload,
        }
    }

    /// The context the walk gave the record.
    #[inline]
    fn ctx(&self, data: &PerfData<'_>) -> RecordCtx {
        let attr = (self.attr != u32::MAX).then_some(self.attr as usize);
        data.session.ctx_of(attr, self.header.misc)
    }
}

/// The main file's records put in time order on another thread (`perfdata-order`), which
/// hands them over in batches (where they are, not their bytes); `each` runs on this
/// thread and returns whether to go on. The ordering and `each` share the two cores.
/// Returns the walk's end and the records it could not join.
fn time_ordered_elsewhere(
    data: &PerfData<'_>,
    mut ahead: perfdata::PopulateAhead,
    mut each: impl FnMut(Origin, &RawRecord<'_>, &RecordCtx) -> bool,
) -> Result<(Result<(), perfdata::Error>, Vec<perfdata::Error>), AnalysisError> {
    let (input, _) = data.records().input();
    std::thread::scope(|scope| {
        let (to_each, batches) = std::sync::mpsc::sync_channel::<Vec<Ordered>>(4);
        let (give_back, returned) = std::sync::mpsc::channel::<Vec<Ordered>>();
        let orderer = std::thread::Builder::new()
            .name("perfdata-order".into())
            .spawn_scoped(scope, move || {
                static_endian!(data.format.endian, |e| {
                    let mut walk = data.records_as(e).time_ordered();
                    let mut batch = Vec::with_capacity(Ordered::BATCH);
                    let walked = walk.for_each(|origin, rec, ctx| {
                        ahead.reached(rec.offset);
                        batch.push(Ordered::new(input, origin, &rec, ctx));
                        if batch.len() == Ordered::BATCH {
                            let next = returned
                                .try_recv()
                                .unwrap_or_else(|_| Vec::with_capacity(Ordered::BATCH));
                            // The receiver gone: `each` stopped the walk.
                            return Ok(to_each.send(std::mem::replace(&mut batch, next)).is_ok());
                        }
                        Ok(true)
                    });
                    if !batch.is_empty() {
                        let _ = to_each.send(batch);
                    }
                    (walked, walk.take_unjoined())
                })
            })
            .map_err(AnalysisError::from)?;
        'walk: for mut batch in batches.iter() {
            for o in &batch {
                if !each(o.origin, &o.record(input), &o.ctx(data)) {
                    break 'walk;
                }
            }
            batch.clear();
            let _ = give_back.send(batch);
        }
        // The orderer stops at its next batch once nobody receives it.
        drop(batches);
        match orderer.join() {
            Ok(r) => Ok(r),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The main file's records replayed in time order: the hot loop of every analysis, in a
/// compile-time byte order, out of line (its code does not depend on what else a walk
/// may do).
#[inline(never)]
fn walk_time_ordered(
    replay: &mut Replay<'_, '_>,
    mut ahead: perfdata::PopulateAhead,
    progress: &mut Option<ProgressReport<'_>>,
    jit: &mut jit::JitDumps,
    events: &mut [String],
) -> (Result<(), perfdata::Error>, Vec<perfdata::Error>) {
    let data = replay.data;
    static_endian!(data.format.endian, |e| {
        let mut walk = data.records_as(e).time_ordered();
        let walked = walk.for_each(|origin, rec, ctx| {
            ahead.reached(rec.offset);
            if let Some(p) = progress.as_mut() {
                p.tick(rec.offset);
            }
            replay.main_record(e, origin, &rec, ctx, jit, events)
        });
        (walked, walk.take_unjoined())
    })
}

/// The main file's records replayed in time order, put in that order on another thread
/// ([`RunOptions::ordering_thread`]).
#[inline(never)]
fn walk_ordered_elsewhere(
    replay: &mut Replay<'_, '_>,
    ahead: perfdata::PopulateAhead,
    progress: &mut Option<ProgressReport<'_>>,
    jit: &mut jit::JitDumps,
    events: &mut [String],
) -> Result<(Result<(), AnalysisError>, Vec<perfdata::Error>), AnalysisError> {
    let mut failed = None;
    let endian = replay.data.format.endian;
    let (walked, unjoined) = time_ordered_elsewhere(replay.data, ahead, |origin, rec, ctx| {
        if let Some(p) = progress.as_mut() {
            p.tick(rec.offset);
        }
        (replay.main_record(endian, origin, rec, ctx, jit, events)).unwrap_or_else(|e| {
            failed = Some(e);
            false
        })
    })?;
    let walked = match failed {
        Some(e) => Err(e.into()),
        None => walked.map_err(AnalysisError::from),
    };
    Ok((walked, unjoined))
}

/// The main file's records in the file's order ([`RunOptions::file_order`]).
#[inline(never)]
fn walk_file_order(
    replay: &mut Replay<'_, '_>,
    progress: &mut Option<ProgressReport<'_>>,
    jit: &mut jit::JitDumps,
    events: &mut [String],
) -> (Result<(), perfdata::Error>, Vec<perfdata::Error>) {
    let data = replay.data;
    static_endian!(data.format.endian, |e| {
        let mut walk = data.records_as(e);
        let walked = walk.for_each(|origin, rec, ctx| {
            if let Some(p) = progress.as_mut() {
                p.tick(rec.offset);
            }
            replay.main_record(e, origin, &rec, ctx, jit, events)
        });
        (walked, walk.take_unjoined())
    })
}

/// The caller's callback of [`Analyzer::run`], its error kept aside: `false` stops.
type Sink<'f> = dyn FnMut(&Machine, &Replayed<'_>) -> bool + 'f;

/// One walk's state: what every record goes through, from a file or a directory's
/// streams alike.
struct Replay<'w, 'a> {
    data: &'a PerfData<'a>,
    machine: &'w mut Machine,
    last_read: &'w mut HashMap<u64, u64>,
    unwinding: &'w mut simpleperf_unwinding::SimpleperfUnwinding,
    expand_read: bool,
    filter: Filtering<'w>,
    sink: &'w mut Sink<'w>,
}

impl Replay<'_, '_> {
    /// A record of the main file: the side band it carries applied to the machine (and
    /// the JIT code due by its time) before it is delivered. Inlined into each walk's
    /// loop (the time-ordered one is every analysis's hot loop).
    #[inline(always)]
    fn main_record<E: Endian>(
        &mut self,
        e: E,
        origin: Origin,
        rec: &RawRecord<'_>,
        ctx: &RecordCtx,
        jit: &mut jit::JitDumps,
        events: &mut [String],
    ) -> Result<bool, perfdata::Error> {
        let data = self.data;
        self.record(e, Place::Main, origin, rec, ctx, |machine, item| {
            if let Some(ev) = side_event(data, rec, ctx)? {
                machine.apply(&ev);
                if let SideEvent::Mmap { pid, filename, .. } = &ev {
                    jit.on_mmap(*pid, filename);
                }
            }
            // A record without a timestamp (FINISHED_ROUND, a pipe's header records)
            // says nothing of where the replay is in time.
            if let Some(t) = item.time.filter(|_| jit.has_pending()) {
                while let Some(code) = jit.next_due(t) {
                    machine.map_jit(&code);
                }
            }
            note_header_record(data, rec, ctx, &mut machine.dsos, events)
        })
    }

    /// One record: decoded, given its simpleperf user frames, the side band up to it
    /// applied by `apply`, then delivered. Whether to go on.
    #[inline(always)]
    fn record<E: Endian>(
        &mut self,
        e: E,
        place: Place,
        origin: Origin,
        rec: &RawRecord<'_>,
        ctx: &RecordCtx,
        apply: impl FnOnce(&mut Machine, &Replayed<'_>) -> Result<(), perfdata::Error>,
    ) -> Result<bool, perfdata::Error> {
        let mut item = item(e, self.data, place, origin, rec, ctx)?;
        let user_chain = apply_simpleperf_unwinding(self.unwinding, &item);
        set_user_chain(&mut item, user_chain.as_deref());
        apply(self.machine, &item)?;
        deliver(
            self.machine,
            &item,
            self.last_read,
            self.expand_read,
            self.filter,
            self.sink,
        )
    }
}

/// A `--threads` directory: the side band of every stream collected and sorted by
/// time, then each stream (or the one chosen) walked with it replayed alongside.
fn walk_directory(
    replay: &mut Replay<'_, '_>,
    recording: &Recording,
    jits: &mut jit::JitDumps,
    only: Option<usize>,
    merge: bool,
) -> Result<(), AnalysisError> {
    let data = replay.data;
    let mut side: Vec<(u64, SideEvent)> = vec![];
    recording.for_each_record(&mut |_, _, rec, ctx| {
        if let Some(ev) = side_event(data, &rec, ctx)? {
            side.push((data.time(&rec, ctx).unwrap_or(0), ev));
        }
        Ok(true)
    })?;
    side.sort_by_key(|(t, _)| *t);
    // The JIT code of the jitdumps the streams map, by time (`walk` reset them).
    for (_, ev) in &side {
        if let SideEvent::Mmap { pid, filename, .. } = ev {
            jits.on_mmap(*pid, filename);
        }
    }
    let jit_code = jits.take_all();
    let places: Vec<Place> = std::iter::once(Place::Main)
        .chain((0..recording.stream_paths().count()).map(Place::DataFile))
        .enumerate()
        .filter(|&(i, _)| only.is_none_or(|s| s == i))
        .map(|(_, p)| p)
        .collect();
    let records = |place: Place| match place {
        Place::Main => data.records(),
        Place::DataFile(i) => data.records_in(recording.stream_bytes(i), 0),
    };
    // Applies the side band and JIT code after `at` (the next of each) up to `upto`, in
    // time order, to the machine.
    let catch_up = |machine: &mut Machine, upto: u64, at: &mut (usize, usize)| loop {
        let side_at = side.get(at.0).map(|s| s.0).filter(|&t| t <= upto);
        let jit_at = jit_code.get(at.1).map(|c| c.time).filter(|&t| t <= upto);
        match (side_at, jit_at) {
            (Some(s), j) if j.is_none_or(|j| s <= j) => {
                machine.apply(&side[at.0].1);
                at.0 += 1;
            }
            (_, Some(_)) => {
                machine.map_jit(&jit_code[at.1]);
                at.1 += 1;
            }
            _ => break,
        }
    };
    // Where the side band is applied up to.
    let mut at = (0, 0);
    let endian = data.format.endian;
    if merge {
        // Every stream in time order, merged: the stream whose record is earliest goes
        // first (a record without a time as soon as it is met; ties to the first stream).
        let mut walks: Vec<_> = places.iter().map(|&p| records(p).time_ordered()).collect();
        let mut live = vec![];
        for w in &mut walks {
            live.push(w.advance()?);
        }
        loop {
            let mut best: Option<(usize, u64)> = None;
            for (i, w) in walks.iter().enumerate().filter(|&(i, _)| live[i]) {
                let (_, raw, ctx) = w.parts();
                let t = data.time(&raw, ctx).unwrap_or(0);
                if best.is_none_or(|(_, b)| t < b) {
                    best = Some((i, t));
                }
            }
            let Some((i, _)) = best else { break };
            let (origin, raw, ctx) = walks[i].parts();
            let ctx = *ctx;
            let go_on = replay.record(endian, places[i], origin, &raw, &ctx, |machine, item| {
                catch_up(machine, item.time.unwrap_or(0), &mut at);
                Ok(())
            })?;
            if !go_on {
                break;
            }
            live[i] = walks[i].advance()?;
        }
    } else {
        let mut go_on = true;
        for place in places {
            if !go_on {
                break;
            }
            replay.machine.reset();
            at = (0, 0);
            let mut visit = |origin: Origin, rec: RawRecord<'_>, ctx: &RecordCtx| {
                go_on = replay.record(endian, place, origin, &rec, ctx, |machine, item| {
                    catch_up(machine, item.time.unwrap_or(0), &mut at);
                    Ok(())
                })?;
                Ok(go_on)
            };
            records(place).time_ordered().for_each(&mut visit)?;
        }
    }
    // The side band after the last record walked too (the last stream's may end before
    // another's threads are named): what is printed at the end (the `pid` key's command)
    // reads the machine as perf's reads its threads, after every record.
    catch_up(replay.machine, u64::MAX, &mut at);
    Ok(())
}

/// The main file's records, then each `data.N` file's.
fn stream_count(recording: &Recording) -> usize {
    1 + recording.stream_paths().count()
}

/// The sample filter as [`deliver`] applies it.
#[derive(Clone, Copy)]
struct Filtering<'f> {
    filter: Option<&'f filter::ResolvedFilter>,
    deliver_hidden: bool,
    /// [`AnalyzerOptions::byte_range`].
    byte_range: Option<(u64, u64)>,
}

impl Filtering<'_> {
    /// Calls `f` with the sample unless the filter drops it (or hides it, and hidden
    /// samples are not wanted); a sample passed on hidden is marked so.
    fn pass(self, machine: &Machine, item: &Replayed<'_>, f: &mut Sink<'_>) -> bool {
        if let (Some((start, end)), Some(_)) = (self.byte_range, &item.sample) {
            if !(start..end).contains(&item.origin.input_offset(item.rec.offset)) {
                return true;
            }
        }
        let (Some(filter), Some(s)) = (self.filter, &item.sample) else {
            return f(machine, item);
        };
        match filter.verdict(machine, s) {
            filter::Verdict::Keep => f(machine, item),
            filter::Verdict::Dropped => true,
            filter::Verdict::Hidden if !self.deliver_hidden => true,
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
#[inline]
fn deliver(
    machine: &mut Machine,
    item: &Replayed<'_>,
    last_read: &mut HashMap<u64, u64>,
    expand_read: bool,
    filter: Filtering<'_>,
    f: &mut Sink<'_>,
) -> Result<bool, perfdata::Error> {
    let Some(s) = &item.sample else {
        return Ok(f(machine, item));
    };
    machine.note_thread(s.pid, s.tid);
    if !expand_read || !item.ctx.sample_type.contains(SampleType::READ) {
        return Ok(filter.pass(machine, item, f));
    }
    deliver_read(machine, item, s, last_read, filter, f)
}

/// [`deliver`]'s PERF_SAMPLE_READ sample: one per counter read (out of line, so that
/// the path every sample takes stays small enough to inline).
#[inline(never)]
fn deliver_read(
    machine: &mut Machine,
    item: &Replayed<'_>,
    s: &SampleInfo<'_>,
    last_read: &mut HashMap<u64, u64>,
    filter: Filtering<'_>,
    f: &mut Sink<'_>,
) -> Result<bool, perfdata::Error> {
    let Some(read) = s.view.read()? else {
        return Ok(filter.pass(machine, item, f));
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
        if !filter.pass(machine, &one, f) {
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
) -> Result<Option<(u64, u64)>, perfdata::Error> {
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

/// simpleperf's CALLCHAIN and UNWINDING_RESULT records go to `unwinding`; a sample gets
/// the user frames of the CALLCHAIN written for it, if one is waiting
/// (the module `simpleperf_unwinding` says how they are matched). Samples the filter or a byte
/// range leaves out take theirs too, so that no chain is left waiting for them.
#[inline]
fn apply_simpleperf_unwinding(
    unwinding: &mut simpleperf_unwinding::SimpleperfUnwinding,
    item: &Replayed<'_>,
) -> Option<Vec<u64>> {
    if let Some(s) = &item.sample {
        return unwinding.take(s.pid, s.tid, s.time);
    }
    let ty = item.rec.record_type();
    if ty == RecordType::SIMPLEPERF_CALLCHAIN || ty == RecordType::SIMPLEPERF_UNWINDING_RESULT {
        simpleperf_record(unwinding, item);
    }
    None
}

/// A simpleperf CALLCHAIN or UNWINDING_RESULT record, to `unwinding` (out of line: rare).
#[inline(never)]
fn simpleperf_record(
    unwinding: &mut simpleperf_unwinding::SimpleperfUnwinding,
    item: &Replayed<'_>,
) {
    match item.data.decode(item.rec, item.ctx) {
        Ok(body) => unwinding.on_record(&body),
        // Only a stack or a note depends on it: the rest of the replay goes on.
        Err(e) => unwinding.undecodable(e),
    }
}

/// Gives `item`'s sample `user` as its user frames ([`SampleInfo::user_callchain`]), in
/// place: a replayed sample is large, and this runs for every record.
#[inline]
fn set_user_chain<'a>(item: &mut Replayed<'a>, user: Option<&'a [u64]>) {
    if let (Some(s), Some(user)) = (item.sample.as_mut(), user) {
        s.user_callchain = Some(user);
    }
}

/// Pipe mode: build ids, features (host, release) and event names arrive as records.
#[inline]
fn note_header_record(
    data: &PerfData<'_>,
    rec: &RawRecord<'_>,
    ctx: &RecordCtx,
    dsos: &mut Dsos,
    events: &mut [String],
) -> Result<(), perfdata::Error> {
    let ty = rec.record_type();
    if ty != RecordType::HEADER_BUILD_ID
        && ty != RecordType::HEADER_FEATURE
        && ty != RecordType::EVENT_UPDATE
    {
        return Ok(());
    }
    header_record(data, rec, ctx, dsos, events)
}

/// [`note_header_record`]'s records (out of line: rare).
#[inline(never)]
fn header_record(
    data: &PerfData<'_>,
    rec: &RawRecord<'_>,
    ctx: &RecordCtx,
    dsos: &mut Dsos,
    events: &mut [String],
) -> Result<(), perfdata::Error> {
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
            let n = if BuildIdMisc(rec.header.misc.0).contains(BuildIdMisc::BUILD_ID_SIZE) {
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
) -> Result<Option<SideEvent>, perfdata::Error> {
    let ty = rec.record_type();
    if !SideEvent::is_side_band(ty) {
        return Ok(None);
    }
    let body = data.decode(rec, ctx)?;
    Ok(SideEvent::from_record(rec.header.misc, &body))
}

/// The record as delivered; `e` is the input's byte order (a compile-time one in the
/// walks that have it: the sample's fields are read in it).
#[inline(always)]
fn item<'a, E: Endian>(
    e: E,
    data: &'a PerfData<'a>,
    place: Place,
    origin: Origin,
    rec: &'a RawRecord<'a>,
    ctx: &'a RecordCtx,
) -> Result<Replayed<'a>, perfdata::Error> {
    let sample = match data.sample_as(e, rec, ctx)? {
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
                kernel: rec.header.misc.cpumode() == CpuMode::KERNEL.0,
                regs_user_mask: ctx.sample_regs_user,
                endian: data.format.endian,
                view: view.in_runtime_order(),
                hidden: false,
                user_callchain: None,
            })
        }
        None => None,
    };
    // A sample's time is its view's (the field the record's time is read from): read once.
    let time = match &sample {
        Some(s) => s.time,
        None => data.time(rec, ctx),
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
    pub fn decode(&self) -> Result<RecordBody<'_>, AnalysisError> {
        Ok(self.data.decode(self.rec, self.ctx)?)
    }
}
