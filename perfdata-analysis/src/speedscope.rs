//! speedscope's JSON file format (<https://www.speedscope.app/file-format-schema.json>):
//! one sampled profile per thread and event, each sample a stack of indices into one
//! shared frame table (root first) weighted by its period, in time order. A frame is a
//! function (an inline chain gives one frame per function) with its source file and, as
//! `line`, the lowest line of it that the samples hit (the debug info's lines are per
//! address, not per function). Written as it is serialized: the samples are never built
//! as JSON values in memory.

use crate::sampled::{SampleEntry, Sampled};
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
    samples: Vec<&'a SampleEntry>,
    /// Frame indices of each stack node, root first (built once per distinct stack).
    paths: &'a HashMap<u32, Vec<u32>>,
}

impl Serialize for Stacks<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.samples.len()))?;
        for e in &self.samples {
            seq.serialize_element(&self.paths[&e.stack])?;
        }
        seq.end()
    }
}

struct Weights<'a>(Vec<&'a SampleEntry>);

impl Serialize for Weights<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for e in &self.0 {
            seq.serialize_element(&e.period)?;
        }
        seq.end()
    }
}

/// The name of a profile: `COMM [PID/TID] EVENT`.
pub fn profile_name(comm: &str, pid: i32, tid: i32, event: &str) -> String {
    format!("{comm} [{pid}/{tid}] {event}")
}

/// Writes the gathered samples as a speedscope file named `name` (gather with
/// [`crate::sampled::GatherOptions::each_sample`] for a time-ordered timeline; aggregated
/// entries become one weighted sample each).
pub fn write(sampled: &Sampled, name: &str, out: impl Write) -> std::io::Result<()> {
    // Frames: one per (function, file); unsymbolized frames by their fallback name.
    let mut frames: Vec<Frame<'_>> = vec![];
    let mut frame_of: HashMap<(&str, Option<&str>), u32> = HashMap::default();
    // Per sampled frame: its speedscope frames, outermost first.
    let mut chains: Vec<Vec<u32>> = Vec::with_capacity(sampled.frames.len());
    for f in &sampled.frames {
        let mut chain = vec![];
        if f.lines.is_empty() {
            let key = (f.fallback_name.as_str(), None);
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
            let key = (func.name.as_str(), func.file.as_deref());
            let i = *frame_of.entry(key).or_insert_with(|| {
                frames.push(Frame {
                    name: &func.name,
                    file: func.file.as_deref(),
                    line: None,
                });
                frames.len() as u32 - 1
            });
            if l.line != 0 && func.file.is_some() {
                let fr = &mut frames[i as usize];
                fr.line = Some(fr.line.map_or(l.line, |x| x.min(l.line)));
            }
            chain.push(i);
        }
        chains.push(chain);
    }
    // Stacks, root first, for every stack a sample ends in.
    let mut paths: HashMap<u32, Vec<u32>> = HashMap::default();
    for e in &sampled.samples {
        paths.entry(e.stack).or_insert_with(|| {
            let mut leaf_first: Vec<u32> = sampled.frames_of(e.stack).collect();
            leaf_first.reverse();
            leaf_first
                .iter()
                .flat_map(|&f| chains[f as usize].iter().copied())
                .collect()
        });
    }
    // One profile per (thread, event), in order of first sample.
    let mut order: Vec<(u32, u32)> = vec![];
    let mut by_profile: HashMap<(u32, u32), Vec<&SampleEntry>> = HashMap::default();
    for e in &sampled.samples {
        let list = by_profile.entry((e.thread, e.event)).or_insert_with(|| {
            order.push((e.thread, e.event));
            vec![]
        });
        list.push(e);
    }
    let profiles = order
        .into_iter()
        .map(|(thread, event)| {
            let samples = by_profile.remove(&(thread, event)).unwrap_or_default();
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
                end_value: samples.iter().map(|e| e.period).sum(),
                weights: Weights(samples.clone()),
                samples: Stacks {
                    samples,
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
        active_profile_index: 0,
        exporter: format!("perfdata {}", env!("CARGO_PKG_VERSION")),
    };
    let mut out = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut out, &file)?;
    out.flush()
}
