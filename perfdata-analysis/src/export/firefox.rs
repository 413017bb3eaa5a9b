//! The Firefox Profiler's processed profile format, through `fxprof-processed-profile`
//! (the profiler team's crate, what samply writes with): one process per pid and one
//! thread track per sampled thread (and per event, when several have samples), frames
//! named by our symbolization and put in the User or Kernel category, samples at their
//! time weighted by their period, and markers for lost samples and (when recorded)
//! the intervals a thread was switched out.

use crate::export::sampled::{gather_each, GatherOptions, SampleEntry, Sampled};
use crate::AnalysisError as Error;
use crate::Analyzer;
use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, CpuDelta, Frame, FrameFlags, FrameInfo, MarkerFieldFlags,
    MarkerFieldFormat, MarkerTiming, ReferenceTimestamp, SamplingInterval, StackHandle,
    StaticSchemaMarker, StaticSchemaMarkerField, StringHandle, ThreadHandle, Timestamp,
};

/// The profile type a [`FirefoxProfile`] holds (the crate's).
pub use fxprof_processed_profile::Profile;
use rustc_hash::FxHashMap as HashMap;
use std::io::Write;

/// Samples perf lost (a LOST or LOST_SAMPLES record).
struct LostMarker {
    name: StringHandle,
    count: u64,
}

impl StaticSchemaMarker for LostMarker {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "LostSamples";
    const DESCRIPTION: Option<&'static str> = Some("perf lost samples here");
    const CHART_LABEL: Option<&'static str> = Some("{marker.data.count} lost");
    const TABLE_LABEL: Option<&'static str> = Some("{marker.data.count} samples lost");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[StaticSchemaMarkerField {
        key: "count",
        label: "Lost",
        format: MarkerFieldFormat::Integer,
        flags: MarkerFieldFlags::empty(),
    }];

    fn name(&self, _: &mut Profile) -> StringHandle {
        self.name
    }

    fn category(&self, _: &mut Profile) -> CategoryHandle {
        CategoryHandle::OTHER
    }

    fn string_field_value(&self, _: u32) -> StringHandle {
        unreachable!("LostSamples has no string field")
    }

    fn number_field_value(&self, _: u32) -> f64 {
        self.count as f64
    }
}

/// A thread switched out (from a SWITCH record to the next switch back in).
struct OffCpuMarker {
    name: StringHandle,
}

impl StaticSchemaMarker for OffCpuMarker {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "OffCpu";
    const DESCRIPTION: Option<&'static str> = Some("the thread was switched out");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[];

    fn name(&self, _: &mut Profile) -> StringHandle {
        self.name
    }

    fn category(&self, _: &mut Profile) -> CategoryHandle {
        CategoryHandle::OTHER
    }

    fn string_field_value(&self, _: u32) -> StringHandle {
        unreachable!("OffCpu has no field")
    }

    fn number_field_value(&self, _: u32) -> f64 {
        unreachable!("OffCpu has no field")
    }
}

/// A scheduler interval of a task, as a caller's analysis computed it (`perfdata
/// sched`'s timehist intervals): [`FirefoxProfile::add_sched_intervals`] marks it on the
/// task's thread (off the CPU before `start`, then running) and on a track per CPU.
#[derive(Debug, Clone)]
pub struct SchedInterval {
    /// Process id (0: the idle task, marked on the CPU track only).
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// The task's name.
    pub comm: String,
    /// The CPU it ran on.
    pub cpu: u32,
    /// It ran from `start` to `end` (nanoseconds of the recording's clock).
    pub start: u64,
    /// Switched out.
    pub end: u64,
    /// Off the CPU before `start` for this long…
    pub wait: u64,
    /// … of which this long runnable (woken, waiting for a CPU).
    pub delay: u64,
    /// The state it waited in (`S` sleeping, `D` uninterruptible, `R` preempted…).
    pub wait_state: Option<char>,
    /// The task that woke it, by name (`comm[tid]`).
    pub waker: Option<String>,
}

/// A task off the CPU: its state and who woke it.
struct SchedOffCpuMarker {
    name: StringHandle,
    state: StringHandle,
    waker: StringHandle,
    delay_ms: f64,
}

impl StaticSchemaMarker for SchedOffCpuMarker {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "SchedOffCpu";
    const DESCRIPTION: Option<&'static str> =
        Some("the task was off the CPU (sched_switch to its next switch-in)");
    const CHART_LABEL: Option<&'static str> = Some("{marker.data.state}");
    const TABLE_LABEL: Option<&'static str> =
        Some("off CPU ({marker.data.state}), woken by {marker.data.waker}");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[
        StaticSchemaMarkerField {
            key: "state",
            label: "State",
            format: MarkerFieldFormat::String,
            flags: MarkerFieldFlags::SEARCHABLE,
        },
        StaticSchemaMarkerField {
            key: "waker",
            label: "Woken by",
            format: MarkerFieldFormat::String,
            flags: MarkerFieldFlags::SEARCHABLE,
        },
        StaticSchemaMarkerField {
            key: "delay",
            label: "Scheduling delay",
            format: MarkerFieldFormat::Milliseconds,
            flags: MarkerFieldFlags::empty(),
        },
    ];

    fn name(&self, _: &mut Profile) -> StringHandle {
        self.name
    }

    fn category(&self, _: &mut Profile) -> CategoryHandle {
        CategoryHandle::OTHER
    }

    fn string_field_value(&self, i: u32) -> StringHandle {
        if i == 0 {
            self.state
        } else {
            self.waker
        }
    }

    fn number_field_value(&self, _: u32) -> f64 {
        self.delay_ms
    }
}

/// A task running on a CPU (on its thread and on the CPU's track).
struct RunningMarker {
    name: StringHandle,
    task: StringHandle,
    cpu: f64,
}

impl StaticSchemaMarker for RunningMarker {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "SchedRunning";
    const DESCRIPTION: Option<&'static str> = Some("the task ran on a CPU");
    const CHART_LABEL: Option<&'static str> = Some("{marker.data.task}");
    const TABLE_LABEL: Option<&'static str> = Some("{marker.data.task} on CPU {marker.data.cpu}");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[
        StaticSchemaMarkerField {
            key: "task",
            label: "Task",
            format: MarkerFieldFormat::String,
            flags: MarkerFieldFlags::SEARCHABLE,
        },
        StaticSchemaMarkerField {
            key: "cpu",
            label: "CPU",
            format: MarkerFieldFormat::Integer,
            flags: MarkerFieldFlags::empty(),
        },
    ];

    fn name(&self, _: &mut Profile) -> StringHandle {
        self.name
    }

    fn category(&self, _: &mut Profile) -> CategoryHandle {
        CategoryHandle::OTHER
    }

    fn string_field_value(&self, _: u32) -> StringHandle {
        self.task
    }

    fn number_field_value(&self, _: u32) -> f64 {
        self.cpu
    }
}

/// A recording as the Firefox Profiler loads it: [`gather`], then
/// [`FirefoxProfile::write`].
pub struct FirefoxProfile {
    p: Profile,
    /// The profile's zero (the first sample's time).
    first: u64,
    processes: HashMap<i32, fxprof_processed_profile::ProcessHandle>,
    by_tid: HashMap<i32, ThreadHandle>,
}

/// Gathers `analyzer`'s recording (every sample in time order, and the markers; `opts`
/// for the rest) straight into a profile named after `product`: the samples are kept
/// only in the profile's own tables, not gathered first. A period over `i32::MAX` is an
/// error: the format's sample weights are 32-bit.
pub fn gather(
    analyzer: &mut Analyzer<'_>,
    opts: &GatherOptions,
    product: &str,
) -> Result<FirefoxProfile, Error> {
    let mut b = Builder::new(product);
    let opts = GatherOptions {
        markers: true,
        ..opts.clone()
    };
    // Every frame is named with its inlined functions: the objects' DWARF loads on
    // another thread while the walk starts.
    analyzer.machine.dsos.read_ahead(opts.inline);
    let sampled = gather_each(analyzer, &opts, &mut |sampled, s| b.add(sampled, s))?;
    Ok(b.finish(&sampled))
}

impl FirefoxProfile {
    /// The profile of samples already gathered (with
    /// [`crate::export::sampled::GatherOptions::each_sample`], and `markers` for the
    /// markers).
    pub fn from_sampled(sampled: &Sampled, product: &str) -> Result<FirefoxProfile, Error> {
        let mut b = Builder::new(product);
        for s in &sampled.samples {
            b.add(sampled, s)?;
        }
        Ok(b.finish(sampled))
    }

    /// The profile, as `fxprof-processed-profile` holds it.
    pub fn profile(&self) -> &Profile {
        &self.p
    }

    fn at(&self, t: u64) -> Timestamp {
        Timestamp::from_nanos_since_reference(t.saturating_sub(self.first))
    }

    /// Marks scheduler intervals: on each task's thread (a track is added for a task
    /// without samples) an "Off CPU" marker with the state it waited in and its waker,
    /// then a "Running" one; on a track per CPU (process "CPUs"), the task it ran.
    pub fn add_sched_intervals(&mut self, intervals: impl IntoIterator<Item = SchedInterval>) {
        let mut cpus: HashMap<u32, ThreadHandle> = HashMap::default();
        let off = self.p.intern_string("Off CPU");
        let running = self.p.intern_string("Running");
        for i in intervals {
            let (start, end) = (self.at(i.start), self.at(i.end));
            let task = self.p.intern_string(&if i.pid == 0 {
                i.comm.clone()
            } else {
                format!("{}[{}]", i.comm, i.tid)
            });
            let cpu_track = match cpus.get(&i.cpu) {
                Some(&h) => h,
                None => {
                    let p = &mut self.p;
                    // A process of its own, with a pid no task has.
                    let process = *self.processes.entry(-1).or_insert_with(|| {
                        p.add_process("CPUs", u32::MAX, Timestamp::from_nanos_since_reference(0))
                    });
                    let h = p.add_thread(
                        process,
                        u32::MAX - 1 - i.cpu,
                        Timestamp::from_nanos_since_reference(0),
                        false,
                    );
                    p.set_thread_name(h, &format!("CPU {}", i.cpu));
                    cpus.insert(i.cpu, h);
                    h
                }
            };
            let marker = |name| RunningMarker {
                name,
                task,
                cpu: f64::from(i.cpu),
            };
            self.p
                .add_marker(cpu_track, MarkerTiming::Interval(start, end), marker(task));
            if i.pid == 0 {
                continue;
            }
            let track = match self.by_tid.get(&i.tid) {
                Some(&h) => h,
                None => {
                    let p = &mut self.p;
                    let process = *self.processes.entry(i.pid).or_insert_with(|| {
                        p.add_process(
                            &i.comm,
                            i.pid as u32,
                            Timestamp::from_nanos_since_reference(0),
                        )
                    });
                    let h = p.add_thread(
                        process,
                        i.tid as u32,
                        Timestamp::from_nanos_since_reference(0),
                        i.tid == i.pid,
                    );
                    p.set_thread_name(h, &i.comm);
                    self.by_tid.insert(i.tid, h);
                    h
                }
            };
            if i.wait > 0 {
                let state = self
                    .p
                    .intern_string(&i.wait_state.map_or("?".to_string(), |c| c.to_string()));
                let waker = self.p.intern_string(i.waker.as_deref().unwrap_or(""));
                let from = self.at(i.start.saturating_sub(i.wait));
                self.p.add_marker(
                    track,
                    MarkerTiming::Interval(from, start),
                    SchedOffCpuMarker {
                        name: off,
                        state,
                        waker,
                        delay_ms: i.delay as f64 / 1e6,
                    },
                );
            }
            self.p
                .add_marker(track, MarkerTiming::Interval(start, end), marker(running));
        }
    }

    /// Writes the profile as the Firefox Profiler loads it (JSON).
    pub fn write(&self, out: impl Write) -> Result<(), Error> {
        let mut out = std::io::BufWriter::new(out);
        serde_json::to_writer(&mut out, &self.p).map_err(std::io::Error::from)?;
        out.flush()?;
        Ok(())
    }

    /// [`FirefoxProfile::write`] gzip-compressed (the profiler loads `.json.gz` files):
    /// the JSON is produced on another thread while this one compresses it.
    pub fn write_gz(&self, out: impl Write) -> Result<(), Error> {
        crate::export::gzip::gzip_beside(out, GZIP_LEVEL, |w| {
            serde_json::to_writer(w, &self.p).map_err(std::io::Error::from)
        })?;
        Ok(())
    }
}

/// The gzip level of [`FirefoxProfile::write_gz`]: the fastest. On a 600 MB dwarf
/// recording's profile (1.75 MB of JSON) level 6, flate2's default and samply's, took
/// 7% of the export for a file 22% smaller (215 KB against 277 KB).
const GZIP_LEVEL: flate2::Compression = flate2::Compression::fast();

/// A profile being built a sample at a time, in time order.
struct Builder {
    p: Profile,
    user: CategoryHandle,
    kernel: CategoryHandle,
    /// The first sample's time: the profile's zero.
    first: Option<u64>,
    /// The sampling interval was taken from a clock event's period.
    interval_set: bool,
    processes: HashMap<i32, fxprof_processed_profile::ProcessHandle>,
    /// The track of each (thread, event), in order of first sample.
    threads: HashMap<(u32, u32), ThreadHandle>,
    tracks: Vec<((u32, u32), ThreadHandle)>,
    by_tid: HashMap<i32, ThreadHandle>,
    /// Per track: its frames' handles (outermost first) and its stacks' handles.
    frames: HashMap<(ThreadHandle, u32), Vec<fxprof_processed_profile::FrameHandle>>,
    stacks: HashMap<(ThreadHandle, u32), StackHandle>,
    path: Vec<u32>,
}

impl Builder {
    fn new(product: &str) -> Self {
        // The interval the profiler assumes between samples: a clock event's period (set
        // at its first sample), else 1 ms.
        let mut p = Profile::new(
            product,
            ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
            SamplingInterval::from_nanos(1_000_000),
        );
        // Frames are named already: nothing for the profiler to symbolicate.
        p.set_symbolicated(true);
        let user = p.add_category("User", CategoryColor::Yellow);
        let kernel = p.add_category("Kernel", CategoryColor::Orange);
        Builder {
            p,
            user,
            kernel,
            first: None,
            interval_set: false,
            processes: HashMap::default(),
            threads: HashMap::default(),
            tracks: vec![],
            by_tid: HashMap::default(),
            frames: HashMap::default(),
            stacks: HashMap::default(),
            path: vec![],
        }
    }

    fn at(&self, t: Option<u64>) -> Timestamp {
        let first = self.first.unwrap_or(0);
        Timestamp::from_nanos_since_reference(t.unwrap_or(first).saturating_sub(first))
    }

    fn add(&mut self, sampled: &Sampled, s: &SampleEntry) -> Result<(), Error> {
        if self.first.is_none() {
            self.first = Some(s.time.or(sampled.time_range.map(|r| r.0)).unwrap_or(0));
        }
        let clock = sampled.events[s.event as usize].unit() == "nanoseconds";
        if clock && !self.interval_set {
            self.p
                .set_interval(SamplingInterval::from_nanos(s.period.max(1)));
            self.interval_set = true;
        }
        let t = &sampled.threads[s.thread as usize];
        let time = self.at(s.time);
        let track = match self.threads.get(&(s.thread, s.event)) {
            Some(&h) => h,
            None => {
                let p = &mut self.p;
                let process = *self
                    .processes
                    .entry(t.pid)
                    .or_insert_with(|| p.add_process(&t.process_name, t.pid as u32, time));
                let h = p.add_thread(process, t.tid as u32, time, t.tid == t.pid);
                self.threads.insert((s.thread, s.event), h);
                self.tracks.push(((s.thread, s.event), h));
                self.by_tid.entry(t.tid).or_insert(h);
                h
            }
        };
        let stack = match self.stacks.get(&(track, s.stack)) {
            Some(&h) => h,
            None => {
                self.path.clear();
                self.path.extend(sampled.frames_of(s.stack));
                let mut parent: Option<StackHandle> = None;
                for &f in self.path.iter().rev() {
                    let (p, user, kernel) = (&mut self.p, self.user, self.kernel);
                    let handles = self.frames.entry((track, f)).or_insert_with(|| {
                        let info = &sampled.frames[f as usize];
                        let category = if info.kernel { kernel } else { user };
                        sampled
                            .frame_names(f)
                            .map(|name| {
                                let label = p.intern_string(name);
                                p.intern_frame(
                                    track,
                                    FrameInfo {
                                        frame: Frame::Label(label),
                                        category_pair: category.into(),
                                        flags: FrameFlags::empty(),
                                    },
                                )
                            })
                            .collect()
                    });
                    for &h in handles.iter() {
                        parent = Some(p.intern_stack(track, parent, h));
                    }
                }
                let h = parent.expect("a stack has a frame");
                self.stacks.insert((track, s.stack), h);
                h
            }
        };
        let weight = i32::try_from(s.period).map_err(|_| {
            crate::AnalysisError::unsupported(format!(
                "a sample's period ({}) does not fit the Firefox Profiler's 32-bit weights",
                s.period
            ))
        })?;
        let cpu = if clock {
            CpuDelta::from_nanos(s.period)
        } else {
            CpuDelta::ZERO
        };
        self.p.add_sample(track, time, Some(stack), cpu, weight);
        Ok(())
    }

    /// Names the tracks (by event too when several events have samples) and adds the
    /// markers.
    fn finish(mut self, sampled: &Sampled) -> FirefoxProfile {
        let several_events = self
            .tracks
            .iter()
            .any(|((_, e), _)| Some(*e) != self.tracks.first().map(|((_, e), _)| *e));
        for &((thread, event), h) in &self.tracks {
            let t = &sampled.threads[thread as usize];
            let name = if several_events {
                format!("{} [{}]", t.name, sampled.events[event as usize].name)
            } else {
                t.name.clone()
            };
            self.p.set_thread_name(h, &name);
        }
        // Markers, on the sampled threads they name (lost records without a thread: the
        // first track).
        let first_track = self.threads.values().min().copied();
        for l in &sampled.lost {
            let track = l
                .pid_tid
                .and_then(|(_, tid)| self.by_tid.get(&tid).copied())
                .or(first_track);
            if let Some(track) = track {
                let name = self.p.intern_string("Lost samples");
                let timing = MarkerTiming::Instant(self.at(Some(l.time)));
                self.p.add_marker(
                    track,
                    timing,
                    LostMarker {
                        name,
                        count: l.count,
                    },
                );
            }
        }
        let mut out_since: HashMap<i32, u64> = HashMap::default();
        for sw in &sampled.switches {
            let Some(&track) = self.by_tid.get(&sw.tid) else {
                continue;
            };
            if sw.out {
                out_since.insert(sw.tid, sw.time);
                continue;
            }
            let timing = match out_since.remove(&sw.tid) {
                Some(from) => MarkerTiming::Interval(self.at(Some(from)), self.at(Some(sw.time))),
                None => MarkerTiming::IntervalEnd(self.at(Some(sw.time))),
            };
            let name = self.p.intern_string("Off CPU");
            self.p.add_marker(track, timing, OffCpuMarker { name });
        }
        let mut open: Vec<(i32, u64)> = out_since.into_iter().collect();
        open.sort_unstable();
        for (tid, from) in open {
            let name = self.p.intern_string("Off CPU");
            let timing = MarkerTiming::IntervalStart(self.at(Some(from)));
            self.p
                .add_marker(self.by_tid[&tid], timing, OffCpuMarker { name });
        }
        FirefoxProfile {
            p: self.p,
            first: self.first.unwrap_or(0),
            processes: self.processes,
            by_tid: self.by_tid,
        }
    }
}
