//! The Firefox Profiler's processed profile format, through `fxprof-processed-profile`
//! (the profiler team's crate, what samply writes with): one process per pid and one
//! thread track per sampled thread (and per event, when several have samples), frames
//! named by our symbolization and put in the User or Kernel category, samples at their
//! time weighted by their period, and markers for lost samples and (when recorded)
//! the intervals a thread was switched out.

use crate::sampled::Sampled;
use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, CpuDelta, Frame, FrameFlags, FrameInfo, MarkerFieldFlags,
    MarkerFieldFormat, MarkerTiming, Profile, ReferenceTimestamp, SamplingInterval, StackHandle,
    StaticSchemaMarker, StaticSchemaMarkerField, StringHandle, ThreadHandle, Timestamp,
};
use perfdata::Error;
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

/// Builds the profile of the gathered samples (gather with
/// [`crate::sampled::GatherOptions::each_sample`], and `markers` for the markers).
/// A period over `i32::MAX` is an error: the format's sample weights are 32-bit.
pub fn profile(sampled: &Sampled, product: &str) -> Result<Profile, Error> {
    let first = sampled.time_range.map_or(0, |(a, _)| a);
    let at = |t: Option<u64>| {
        Timestamp::from_nanos_since_reference(t.unwrap_or(first).saturating_sub(first))
    };
    // The interval the profiler assumes between samples: a clock event's period, else 1 ms.
    let interval = sampled
        .samples
        .iter()
        .find(|s| sampled.events[s.event as usize].unit() == "nanoseconds")
        .map_or(1_000_000, |s| s.period.max(1));
    let mut p = Profile::new(
        product,
        ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
        SamplingInterval::from_nanos(interval),
    );
    // Frames are named already: nothing for the profiler to symbolicate.
    p.set_symbolicated(true);
    let user = p.add_category("User", CategoryColor::Yellow);
    let kernel = p.add_category("Kernel", CategoryColor::Orange);
    let several_events = {
        let mut seen = sampled.samples.iter().map(|s| s.event);
        let e = seen.next();
        seen.any(|x| Some(x) != e)
    };
    let mut processes = HashMap::default();
    let mut threads: HashMap<(u32, u32), ThreadHandle> = HashMap::default();
    let mut by_tid: HashMap<i32, ThreadHandle> = HashMap::default();
    // Per track: its frames' handles (outermost first) and its stacks' handles.
    let mut frames: HashMap<(ThreadHandle, u32), Vec<fxprof_processed_profile::FrameHandle>> =
        HashMap::default();
    let mut stacks: HashMap<(ThreadHandle, u32), StackHandle> = HashMap::default();
    let mut path: Vec<u32> = vec![];
    for s in &sampled.samples {
        let t = &sampled.threads[s.thread as usize];
        let time = at(s.time);
        let track = match threads.get(&(s.thread, s.event)) {
            Some(&h) => h,
            None => {
                let process = *processes
                    .entry(t.pid)
                    .or_insert_with(|| p.add_process(&t.process_name, t.pid as u32, time));
                let h = p.add_thread(process, t.tid as u32, time, t.tid == t.pid);
                let name = if several_events {
                    format!("{} [{}]", t.name, sampled.events[s.event as usize].name)
                } else {
                    t.name.clone()
                };
                p.set_thread_name(h, &name);
                threads.insert((s.thread, s.event), h);
                by_tid.entry(t.tid).or_insert(h);
                h
            }
        };
        let stack = match stacks.get(&(track, s.stack)) {
            Some(&h) => h,
            None => {
                path.clear();
                path.extend(sampled.frames_of(s.stack));
                let mut parent: Option<StackHandle> = None;
                for &f in path.iter().rev() {
                    let handles = frames.entry((track, f)).or_insert_with(|| {
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
                stacks.insert((track, s.stack), h);
                h
            }
        };
        let weight = i32::try_from(s.period).map_err(|_| {
            Error::other(format!(
                "a sample's period ({}) does not fit the Firefox Profiler's 32-bit weights",
                s.period
            ))
        })?;
        let cpu = if sampled.events[s.event as usize].unit() == "nanoseconds" {
            CpuDelta::from_nanos(s.period)
        } else {
            CpuDelta::ZERO
        };
        p.add_sample(track, time, Some(stack), cpu, weight);
    }
    // Markers, on the sampled threads they name (lost records without a thread: the
    // first track).
    let first_track = threads.values().min().copied();
    for l in &sampled.lost {
        let track = l
            .pid_tid
            .and_then(|(_, tid)| by_tid.get(&tid).copied())
            .or(first_track);
        if let Some(track) = track {
            let name = p.intern_string("Lost samples");
            p.add_marker(
                track,
                MarkerTiming::Instant(at(Some(l.time))),
                LostMarker {
                    name,
                    count: l.count,
                },
            );
        }
    }
    let mut out_since: HashMap<i32, u64> = HashMap::default();
    for sw in &sampled.switches {
        let Some(&track) = by_tid.get(&sw.tid) else {
            continue;
        };
        if sw.out {
            out_since.insert(sw.tid, sw.time);
            continue;
        }
        let timing = match out_since.remove(&sw.tid) {
            Some(from) => MarkerTiming::Interval(at(Some(from)), at(Some(sw.time))),
            None => MarkerTiming::IntervalEnd(at(Some(sw.time))),
        };
        let name = p.intern_string("Off CPU");
        p.add_marker(track, timing, OffCpuMarker { name });
    }
    let mut open: Vec<(i32, u64)> = out_since.into_iter().collect();
    open.sort_unstable();
    for (tid, from) in open {
        let name = p.intern_string("Off CPU");
        p.add_marker(
            by_tid[&tid],
            MarkerTiming::IntervalStart(at(Some(from))),
            OffCpuMarker { name },
        );
    }
    Ok(p)
}

/// Writes a profile as the Firefox Profiler loads it (JSON).
pub fn write(profile: &Profile, out: impl Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut out, profile)?;
    out.flush()
}
