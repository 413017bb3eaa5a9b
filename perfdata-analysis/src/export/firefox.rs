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

/// A recording as the Firefox Profiler loads it: [`gather`], then
/// [`FirefoxProfile::write`].
pub struct FirefoxProfile(Profile);

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
    let sampled = gather_each(analyzer, &opts, &mut |sampled, s| b.add(sampled, s))?;
    Ok(FirefoxProfile(b.finish(&sampled)))
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
        Ok(FirefoxProfile(b.finish(sampled)))
    }

    /// The profile, as `fxprof-processed-profile` holds it.
    pub fn profile(&self) -> &Profile {
        &self.0
    }

    /// Writes the profile as the Firefox Profiler loads it (JSON).
    pub fn write(&self, out: impl Write) -> Result<(), Error> {
        let mut out = std::io::BufWriter::new(out);
        serde_json::to_writer(&mut out, &self.0).map_err(std::io::Error::from)?;
        out.flush()?;
        Ok(())
    }
}

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
    fn finish(mut self, sampled: &Sampled) -> Profile {
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
        self.p
    }
}
