//! perf.data → gperftools CPU profile: the user-space stacks of the samples of one event
//! (and optionally one process) — as every analysis takes them, unwound for a
//! `--call-graph dwarf` recording — identical stacks merged into one record, and the map
//! text from the selected processes' MMAP/MMAP2 records. (Reading and writing profiles,
//! and profile → perf.data, are the format crate's `perfdata::gperftools`.)

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::AnalysisError as Error;
use crate::{Analyzer, Stack};
use perfdata::gperftools::types::{Header, Record};
use perfdata::gperftools::{format_mapping, Mapping, Profile, SlotFormat};
use perfdata::types::{AttrType, FeatureBody, FeatureId, Mmap2FileId, RecordBody, RecordType};

/// Which samples become the profile.
#[derive(Debug, Clone, Default)]
pub struct FromPerfOptions {
    /// Only this process (`--pid`).
    pub pid: Option<u32>,
    /// Only processes whose COMM is this (`--comm`).
    pub comm: Option<String>,
    /// Only this event, by its name in HEADER_EVENT_DESC (`--event`); default: the first.
    pub event: Option<String>,
    /// Word size and byte order of the profile (default: 64-bit little-endian).
    pub layout: Option<SlotFormat>,
}

/// What the conversion kept and dropped, for the user.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FromPerfSummary {
    /// The event the samples came from (its name, or `attr N`).
    pub event: String,
    /// Samples of that event in the selected process(es).
    pub samples: u64,
    /// Of those, samples without a user-space frame (kernel only): not in the profile.
    pub without_user_frames: u64,
    /// Records of the profile (distinct stacks).
    pub stacks: u64,
    /// Mappings written into the map text.
    pub mappings: u64,
    /// Samples per process among the selected ones: more than one means several address
    /// spaces share the profile (select one with `pid`).
    pub pids: BTreeMap<u32, u64>,
}

/// Builds the profile of `analyzer`'s recording (opened with the symbols, unwind
/// tables and stack options wanted); [`Profile::encode`] or
/// `perfdata::gperftools::save` writes it.
pub fn from_perf(
    analyzer: &mut Analyzer<'_>,
    opts: &FromPerfOptions,
) -> Result<(Profile, FromPerfSummary), Error> {
    let recording = analyzer.recording();
    let data = &analyzer.data;
    let names = event_names(data)?;
    let attrs = &data.session.attrs;
    if attrs.is_empty() {
        return Err(crate::AnalysisError::unsupported(
            "the perf.data file has no event (attr)",
        ));
    }
    let attr_index = match &opts.event {
        None => 0,
        Some(want) => (0..attrs.len())
            .find(|i| names.get(i).is_some_and(|n| n == want))
            .ok_or_else(|| {
                let known: Vec<String> = (0..attrs.len()).map(|i| event_label(&names, i)).collect();
                crate::BadOption::new(
                    "--event",
                    format!(
                        "no event named `{want}` (the file has: {})",
                        known.join(", ")
                    ),
                )
            })?,
    };
    let attr = &attrs[attr_index].attr;
    let period_us = period_us(attr);

    // First pass: which pids the COMM filter selects (a COMM can follow the first
    // samples of a process: exec).
    let mut comm_pids: BTreeSet<u32> = BTreeSet::new();
    if let Some(want) = &opts.comm {
        recording.for_each_record(&mut |_, _, rec, ctx| {
            if rec.record_type() == RecordType::COMM {
                if let RecordBody::Comm(c) = data.decode(&rec, &ctx.ctx)? {
                    if c.comm.to_str_lossy() == want.as_str() {
                        comm_pids.insert(c.pid);
                    }
                }
            }
            Ok(true)
        })?;
        if comm_pids.is_empty() {
            return Err(crate::BadOption::new(
                "--comm",
                format!("no process has the command name `{want}`"),
            )
            .into());
        }
    }
    let selected = |pid: u32| -> bool {
        opts.pid.is_none_or(|p| p == pid) && (opts.comm.is_none() || comm_pids.contains(&pid))
    };

    // Second pass, in time order against the processes' maps: stacks and mappings.
    let mut order: Vec<Vec<u64>> = Vec::new();
    let mut counts: HashMap<Vec<u64>, u64> = HashMap::new();
    let mut maps: BTreeMap<(u64, u64, String), Mapping> = BTreeMap::new();
    let mut summary = FromPerfSummary {
        event: event_label(&names, attr_index),
        ..FromPerfSummary::default()
    };
    let mut stack = Vec::new();
    let mut full = Stack::default();
    analyzer.run(
        crate::RunOptions {
            expand_read: false,
            ..Default::default()
        },
        |machine, item| -> Result<bool, crate::AnalysisError> {
            let ty = item.rec.record_type();
            if let Some(s) = item
                .sample
                .as_ref()
                .filter(|_| item.ctx.attr == Some(attr_index as u32))
            {
                let pid = s.pid as u32;
                if !selected(pid) {
                    return Ok(true);
                }
                summary.samples += 1;
                *summary.pids.entry(pid).or_default() += 1;
                machine.stack(s, &mut full)?;
                user_frames(&full, &mut stack);
                if stack.is_empty() {
                    summary.without_user_frames += 1;
                    return Ok(true);
                }
                match counts.get_mut(stack.as_slice()) {
                    Some(n) => *n += 1,
                    None => {
                        counts.insert(stack.clone(), 1);
                        order.push(stack.clone());
                    }
                }
            } else if ty == RecordType::MMAP || ty == RecordType::MMAP2 {
                if let Some(m) = mapping_of(&item.decode()?, &selected) {
                    maps.insert((m.start, m.end, m.path.clone()), m);
                }
            }
            Ok(true)
        },
    )?;

    let records = order
        .into_iter()
        .map(|pcs| {
            let count = counts[&pcs];
            Record { count, pcs }
        })
        .collect::<Vec<_>>();
    summary.stacks = records.len() as u64;
    summary.mappings = maps.len() as u64;
    let map_text = maps.values().map(format_mapping).collect::<String>();
    let profile = Profile {
        layout: opts.layout.unwrap_or(SlotFormat::B64_LE),
        header: Header {
            period_us,
            ..Header::default()
        },
        records,
        map_text: map_text.into_bytes(),
    };
    Ok((profile, summary))
}

/// The user-space frames of a stack, leaf first, as a gperftools profile holds them:
/// return addresses for the callers (an unwound caller is reported at its call
/// instruction, one byte before).
fn user_frames(stack: &Stack, out: &mut Vec<u64>) {
    out.clear();
    for (i, &(ip, kernel)) in stack.addrs.iter().enumerate() {
        if kernel {
            continue;
        }
        let unwound_caller = stack.unwound.is_some() && i > stack.user_from;
        out.push(if unwound_caller { ip + 1 } else { ip });
    }
}

/// The sampling period in microseconds: 1e6 / frequency in frequency mode; the period
/// itself for the clock events (nanoseconds → µs); otherwise the period in event counts
/// (a gperftools profile has no other unit).
fn period_us(attr: &perfdata::types::Attr<'_>) -> u64 {
    let v = attr.sample_period_or_freq;
    if attr.attr_flags.freq() {
        return (1_000_000 / v.max(1)).max(1);
    }
    // PERF_COUNT_SW_CPU_CLOCK (0), PERF_COUNT_SW_TASK_CLOCK (1): nanoseconds.
    if attr.type_ == AttrType::SOFTWARE && attr.config <= 1 {
        return (v / 1000).max(1);
    }
    v.max(1)
}

/// The events' names from HEADER_EVENT_DESC, by attr index (matched by sample ids).
fn event_names(data: &perfdata::PerfData<'_>) -> Result<HashMap<usize, String>, Error> {
    let mut out = HashMap::new();
    for f in &data.features {
        if f.id != FeatureId::EVENT_DESC {
            continue;
        }
        if let FeatureBody::EventDesc(d) = data.feature(f)? {
            let attrs = &data.session.attrs;
            out.extend(perfdata::events::described_events(&d, |id| {
                attrs.iter().position(|a| a.ids.contains(&id))
            }));
        }
    }
    Ok(out)
}

fn event_label(names: &HashMap<usize, String>, i: usize) -> String {
    names
        .get(&i)
        .cloned()
        .unwrap_or_else(|| format!("attr {i}"))
}

/// A MMAP/MMAP2 record of a selected process as a map-text mapping.
fn mapping_of(body: &RecordBody<'_>, selected: &dyn Fn(u32) -> bool) -> Option<Mapping> {
    const PROT_READ: u32 = 1;
    const PROT_WRITE: u32 = 2;
    const PROT_EXEC: u32 = 4;
    const MAP_SHARED: u32 = 1;
    let (pid, addr, len, pgoff, perms, dev, inode, path) = match body {
        RecordBody::Mmap(m) => (
            m.pid,
            m.addr,
            m.len,
            m.pgoff,
            // MMAP (v1) records executable mappings only.
            "r-xp".to_string(),
            "00:00".to_string(),
            0,
            m.filename.to_str_lossy().into_owned(),
        ),
        RecordBody::Mmap2(m) => {
            let bit = |b: u32, c: char| if m.prot & b != 0 { c } else { '-' };
            let perms = format!(
                "{}{}{}{}",
                bit(PROT_READ, 'r'),
                bit(PROT_WRITE, 'w'),
                bit(PROT_EXEC, 'x'),
                if m.map_flags & MAP_SHARED != 0 {
                    's'
                } else {
                    'p'
                }
            );
            let (dev, inode) = match &m.file_id {
                Mmap2FileId::Inode(i) => (format!("{:02x}:{:02x}", i.maj, i.min), i.ino),
                Mmap2FileId::BuildId(_) => ("00:00".to_string(), 0),
            };
            (
                m.pid,
                m.addr,
                m.len,
                m.pgoff,
                perms,
                dev,
                inode,
                m.filename.to_str_lossy().into_owned(),
            )
        }
        _ => return None,
    };
    // pid -1: the kernel's own mappings, never a process's.
    if pid == u32::MAX || !selected(pid) {
        return None;
    }
    Some(Mapping {
        start: addr,
        end: addr.saturating_add(len),
        perms,
        offset: pgoff,
        dev,
        inode,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_user_frames_are_kept_as_return_addresses() {
        let stack = Stack {
            addrs: vec![
                (0xffff_8000_0000_1000, true),
                (0x401000, false),
                (0x402000, false),
            ],
            ..Stack::default()
        };
        let mut out = vec![];
        user_frames(&stack, &mut out);
        assert_eq!(out, [0x401000, 0x402000]);
        // Unwound: the callers come back to their return addresses.
        let mut unwound = stack.clone();
        unwound.unwound = Some(crate::stack::unwind::StackEnd::Complete);
        unwound.user_from = 1;
        user_frames(&unwound, &mut out);
        assert_eq!(out, [0x401000, 0x402001]);
        let kernel_only = Stack {
            addrs: vec![(0xffff_8000_0000_1000, true)],
            ..Stack::default()
        };
        user_frames(&kernel_only, &mut out);
        assert!(out.is_empty());
    }
}
