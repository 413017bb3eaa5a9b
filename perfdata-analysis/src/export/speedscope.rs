//! speedscope's JSON file format (<https://www.speedscope.app/file-format-schema.json>):
//! one sampled profile per thread and event, each sample a stack of indices into one
//! shared frame table (root first) weighted by its period, in time order. A frame is a
//! function (an inline chain gives one frame per function), one per name, with its source
//! file and, as `line`, the lowest line of it that the samples hit (the debug info's lines
//! are per address, not per function). Written as it is serialized: the samples are never
//! built as JSON values in memory, and [`gather`] holds a bounded number of them (the rest
//! are spilled to a temporary file until their profile is written). The file opens on its
//! busiest profile.

use crate::export::sampled::{gather_each, GatherOptions, SampleEntry, Sampled};
use crate::AnalysisError as Error;
use crate::Analyzer;
use rustc_hash::FxHashMap as HashMap;
use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;
use std::io::Write;

/// The schema's URL, written as the file's `$schema`.
pub const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

#[derive(Serialize)]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    shared: Shared<'a>,
    profiles: Vec<Profile<'a>>,
    name: &'a str,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: usize,
    exporter: String,
}

#[derive(Serialize)]
struct Shared<'a> {
    frames: Vec<Frame<'a>>,
}

#[derive(Serialize)]
struct Frame<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
}

#[derive(Serialize)]
struct Profile<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u64,
    #[serde(rename = "endValue")]
    end_value: u64,
    samples: Stacks<'a>,
    weights: Weights<'a>,
}

/// The samples of one profile, serialized one stack at a time.
struct Stacks<'a> {
    store: &'a ProfileSamples,
    profile: usize,
    /// Frame indices of each stack node, root first (built once per distinct stack).
    paths: &'a HashMap<u32, Vec<u32>>,
}

impl Serialize for Stacks<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.store.count(self.profile)))?;
        self.store.each(
            self.profile,
            |stack, _| seq.serialize_element(&self.paths[&stack]),
            serde::ser::Error::custom,
        )?;
        seq.end()
    }
}

/// The weights of one profile, in the order of its samples.
struct Weights<'a> {
    store: &'a ProfileSamples,
    profile: usize,
}

impl Serialize for Weights<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.store.count(self.profile)))?;
        self.store.each(
            self.profile,
            |_, period| seq.serialize_element(&period),
            serde::ser::Error::custom,
        )?;
        seq.end()
    }
}

/// Bytes of samples a [`Timeline`] holds in memory before it spills them.
pub const SPILL_BUDGET: usize = 16 << 20;

/// One sample as spilled: its stack and its period, little-endian.
const ENTRY: usize = 12;

/// The samples of each profile (thread × event), in time order: held in memory up to
/// [`SPILL_BUDGET`] bytes in all, then appended to an unnamed temporary file (deleted
/// when closed) as one chunk per profile, so that memory does not grow with the number of
/// samples. Read back profile by profile when the file is written.
struct ProfileSamples {
    /// (thread, event) of each profile, in order of first sample.
    keys: Vec<(u32, u32)>,
    index: HashMap<(u32, u32), usize>,
    logs: Vec<ProfileLog>,
    /// The distinct stacks samples end in.
    leaves: rustc_hash::FxHashSet<u32>,
    held: usize,
    /// Bytes held before a spill.
    budget: usize,
    spill: Option<std::fs::File>,
    spilled: u64,
}

#[derive(Default)]
struct ProfileLog {
    count: usize,
    period: u64,
    /// Spilled chunks: offset in the spill file and samples.
    chunks: Vec<(u64, usize)>,
    /// Samples not spilled yet.
    held: Vec<u8>,
}

impl ProfileSamples {
    fn new(budget: usize) -> Self {
        ProfileSamples {
            keys: vec![],
            index: HashMap::default(),
            logs: vec![],
            leaves: Default::default(),
            held: 0,
            budget,
            spill: None,
            spilled: 0,
        }
    }

    fn push(&mut self, e: &SampleEntry) -> std::io::Result<()> {
        let key = (e.thread, e.event);
        let i = *self.index.entry(key).or_insert_with(|| {
            self.keys.push(key);
            self.logs.push(ProfileLog::default());
            self.logs.len() - 1
        });
        let log = &mut self.logs[i];
        log.count += 1;
        log.period += e.period;
        log.held.extend_from_slice(&e.stack.to_le_bytes());
        log.held.extend_from_slice(&e.period.to_le_bytes());
        self.leaves.insert(e.stack);
        self.held += ENTRY;
        if self.held >= self.budget {
            self.spill_all()?;
        }
        Ok(())
    }

    /// Appends every profile's held samples to the spill file, as one chunk each.
    fn spill_all(&mut self) -> std::io::Result<()> {
        use std::io::Write as _;
        let file = match &mut self.spill {
            Some(f) => f,
            None => self.spill.insert(tempfile::tempfile()?),
        };
        let mut w = std::io::BufWriter::new(file);
        for log in &mut self.logs {
            if log.held.is_empty() {
                continue;
            }
            w.write_all(&log.held)?;
            log.chunks.push((self.spilled, log.held.len() / ENTRY));
            self.spilled += log.held.len() as u64;
            // Freed, not kept: the next chunk may be another profile's.
            log.held = Vec::new();
        }
        w.flush()?;
        self.held = 0;
        Ok(())
    }

    fn count(&self, profile: usize) -> usize {
        self.logs[profile].count
    }

    /// Calls `f` with the stack and period of each sample of `profile`, in order.
    fn each<E>(
        &self,
        profile: usize,
        mut f: impl FnMut(u32, u64) -> Result<(), E>,
        io_error: impl Fn(std::io::Error) -> E,
    ) -> Result<(), E> {
        use std::io::{Read as _, Seek as _, SeekFrom};
        let mut emit = |bytes: &[u8]| -> Result<(), E> {
            for e in bytes.chunks_exact(ENTRY) {
                let stack = u32::from_le_bytes(e[..4].try_into().expect("4 bytes"));
                let period = u64::from_le_bytes(e[4..].try_into().expect("8 bytes"));
                f(stack, period)?;
            }
            Ok(())
        };
        let log = &self.logs[profile];
        if let Some(mut file) = self.spill.as_ref() {
            let mut buf = vec![0u8; (64 << 10) / ENTRY * ENTRY];
            for &(offset, samples) in &log.chunks {
                file.seek(SeekFrom::Start(offset)).map_err(&io_error)?;
                let mut left = samples * ENTRY;
                while left > 0 {
                    let n = left.min(buf.len());
                    file.read_exact(&mut buf[..n]).map_err(&io_error)?;
                    emit(&buf[..n])?;
                    left -= n;
                }
            }
        }
        emit(&log.held)
    }
}

/// The name of a profile: `COMM [PID/TID] EVENT`.
pub fn profile_name(comm: &str, pid: i32, tid: i32, event: &str) -> String {
    format!("{comm} [{pid}/{tid}] {event}")
}

/// A recording's samples gathered for a speedscope file named `name`: the tables, and
/// each profile's samples held up to [`SPILL_BUDGET`] bytes (the rest wait in a
/// temporary file), so that memory follows the frames and stacks, not the number of
/// samples.
pub struct Timeline {
    sampled: Sampled,
    store: ProfileSamples,
    name: String,
}

/// Gathers `analyzer`'s recording (every sample, in time order; `opts` for the rest) for
/// a speedscope file named `name` ([`Timeline::write`]).
pub fn gather(
    analyzer: &mut Analyzer<'_>,
    opts: &GatherOptions,
    name: &str,
) -> Result<Timeline, Error> {
    let mut store = ProfileSamples::new(SPILL_BUDGET);
    let sampled = gather_each(analyzer, opts, &mut |_, e| {
        store.push(e).map_err(Error::from)
    })?;
    Ok(Timeline {
        sampled,
        store,
        name: name.to_string(),
    })
}

impl Timeline {
    /// The timeline of samples already gathered (with
    /// [`crate::export::sampled::GatherOptions::each_sample`] for a time-ordered timeline;
    /// aggregated entries become one weighted sample each).
    pub fn from_sampled(sampled: Sampled, name: &str) -> Result<Timeline, Error> {
        Timeline::held(sampled, name, SPILL_BUDGET)
    }

    /// [`Timeline::from_sampled`], spilling beyond `budget` bytes of samples.
    fn held(sampled: Sampled, name: &str, budget: usize) -> Result<Timeline, Error> {
        let mut store = ProfileSamples::new(budget);
        for e in &sampled.samples {
            store.push(e)?;
        }
        Ok(Timeline {
            sampled,
            store,
            name: name.to_string(),
        })
    }

    /// Writes the speedscope file.
    pub fn write(&self, out: impl Write) -> Result<(), Error> {
        Ok(write_profiles(&self.sampled, &self.store, &self.name, out)?)
    }
}

fn write_profiles(
    sampled: &Sampled,
    store: &ProfileSamples,
    name: &str,
    out: impl Write,
) -> std::io::Result<()> {
    // Frames: one per function name (speedscope merges frames by their key, name and
    // file and line: a function seen with the files of the headers inlined into it would
    // be several functions in every view), with the first file it was seen with and the
    // lowest line of that file; unsymbolized frames by their fallback name.
    let mut frames: Vec<Frame<'_>> = vec![];
    let mut frame_of: HashMap<(&str, bool), u32> = HashMap::default();
    // Per sampled frame: its speedscope frames, outermost first.
    let mut chains: Vec<Vec<u32>> = Vec::with_capacity(sampled.frames.len());
    for f in &sampled.frames {
        let mut chain = vec![];
        if f.lines.is_empty() {
            let key = (f.fallback_name.as_str(), false);
            let i = *frame_of.entry(key).or_insert_with(|| {
                frames.push(Frame {
                    name: &f.fallback_name,
                    file: None,
                    line: None,
                });
                frames.len() as u32 - 1
            });
            chain.push(i);
        }
        for l in f.lines.iter().rev() {
            let func = &sampled.functions[l.function as usize];
            let key = (func.name.as_str(), true);
            let i = *frame_of.entry(key).or_insert_with(|| {
                frames.push(Frame {
                    name: &func.name,
                    file: func.file.as_deref(),
                    line: None,
                });
                frames.len() as u32 - 1
            });
            let fr = &mut frames[i as usize];
            if l.line != 0 && func.file.is_some() && fr.file == func.file.as_deref() {
                fr.line = Some(fr.line.map_or(l.line, |x| x.min(l.line)));
            }
            chain.push(i);
        }
        chains.push(chain);
    }
    // Stacks, root first, for every stack a sample ends in.
    let paths: HashMap<u32, Vec<u32>> = store
        .leaves
        .iter()
        .map(|&leaf| {
            let mut leaf_first: Vec<u32> = sampled.frames_of(leaf).collect();
            leaf_first.reverse();
            let path = leaf_first
                .iter()
                .flat_map(|&f| chains[f as usize].iter().copied())
                .collect();
            (leaf, path)
        })
        .collect();
    // One profile per (thread, event), in order of first sample.
    let profiles = store
        .keys
        .iter()
        .enumerate()
        .map(|(i, &(thread, event))| {
            let t = &sampled.threads[thread as usize];
            let ev = &sampled.events[event as usize];
            Profile {
                kind: "sampled",
                name: profile_name(&t.name, t.pid, t.tid, &ev.name),
                unit: match ev.unit() {
                    "nanoseconds" => "nanoseconds",
                    _ => "none",
                },
                start_value: 0,
                end_value: store.logs[i].period,
                weights: Weights { store, profile: i },
                samples: Stacks {
                    store,
                    profile: i,
                    paths: &paths,
                },
            }
        })
        .collect();
    let file = File {
        schema: SCHEMA,
        shared: Shared { frames },
        profiles,
        name,
        // The view opens on the busiest profile (the most weight), not on whichever
        // thread sampled first (often perf's own exec of the workload).
        active_profile_index: (0..store.keys.len())
            .max_by_key(|&i| (store.logs[i].period, std::cmp::Reverse(i)))
            .unwrap_or(0),
        exporter: format!("perfdata {}", env!("CARGO_PKG_VERSION")),
    };
    let mut out = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut out, &file)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::sampled::{EventInfo, FrameInfo, StackNode, ThreadInfo};

    #[test]
    fn spilled_samples_are_written_as_held_ones() {
        let frame = |name: &str| FrameInfo {
            address: 0,
            kernel: false,
            mapping: None,
            lines: vec![],
            fallback_name: name.into(),
            truncated: false,
        };
        let thread = |tid| ThreadInfo {
            pid: 1,
            tid,
            name: format!("t{tid}"),
            process_name: "p".into(),
        };
        let mut sampled = Sampled {
            events: vec![EventInfo {
                name: "cpu-clock".into(),
                samples: 0,
                period: 0,
            }],
            threads: vec![thread(1), thread(2), thread(3)],
            frames: vec![frame("main"), frame("a"), frame("b")],
            stacks: vec![
                StackNode {
                    parent: None,
                    frame: 0,
                },
                StackNode {
                    parent: Some(0),
                    frame: 1,
                },
                StackNode {
                    parent: Some(0),
                    frame: 2,
                },
            ],
            ..Sampled::default()
        };
        for i in 0..1000u32 {
            sampled.samples.push(SampleEntry {
                thread: (i * 7 % 3),
                event: 0,
                stack: i % 3,
                cpu: None,
                time: Some(u64::from(i)),
                count: 1,
                period: u64::from(i) * 1000 + 1,
            });
        }
        let held = |budget| {
            let mut out = vec![];
            Timeline::held(sampled.clone(), "x", budget)
                .unwrap()
                .write(&mut out)
                .unwrap();
            out
        };
        let whole = held(SPILL_BUDGET);
        // Every 2 samples, and every 37: chunks of every size, in every profile.
        assert_eq!(held(2 * ENTRY), whole);
        assert_eq!(held(37 * ENTRY), whole);
        let v: serde_json::Value = serde_json::from_slice(&whole).unwrap();
        let profiles = v["profiles"].as_array().unwrap();
        assert_eq!(profiles.len(), 3);
        let weights: usize = profiles
            .iter()
            .map(|p| p["weights"].as_array().unwrap().len())
            .sum();
        assert_eq!(weights, 1000);
        // The first profile is thread 1's (sample 0), its samples in time order.
        assert_eq!(profiles[0]["weights"][1], 3001);
    }
}
