//! Folded stacks (`comm;root;…;leaf count`), the input of flame graphs: the same lines
//! `perf script | inferno-collapse-perf` gives, computed without printing and re-parsing
//! text. inferno's rules are followed: only one event (the first sampled, unless one is
//! named), counts are periods, a function without a symbol is named
//! after its object (`[libc.so.6]`), argument lists are dropped, `;` becomes `:`.

use crate::machine::stitch::RawStack;
use crate::symbols::naming::{frame_name, inlined_names};
use crate::symbols::Frame;
use crate::AnalysisError as Error;
use crate::Analyzer;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// Options of [`collapse`].
#[derive(Debug, Clone, Default)]
pub struct CollapseOptions {
    /// Only this event (by name); default: the first event sampled.
    pub event: Option<String>,
    /// Append `-PID` to the process name (inferno's `--pid`).
    pub include_pid: bool,
    /// Append `-PID/TID` (inferno's `--tid`).
    pub include_tid: bool,
    /// Add the functions inlined at each address (DWARF; `perf script --inline`). Needs
    /// an analyzer opened with `AnalyzerOptions::lines`.
    pub inline: bool,
    /// Off-CPU stacks (`--off-cpu`): only the samples whose stacks switch-outs took, of
    /// any event, each weighed by the nanoseconds off the CPU (the off-CPU flame
    /// graph's input); see [`crate::analyses::weights::SampleWeights`].
    pub off_cpu: Option<std::sync::Arc<crate::analyses::weights::SampleWeights>>,
}

/// The folded stacks of a recording, sorted as inferno prints them.
pub fn collapse(
    analyzer: &mut Analyzer<'_>,
    opts: &CollapseOptions,
) -> Result<BTreeMap<String, u64>, Error> {
    let wanted =
        match &opts.event {
            Some(name) => Some(analyzer.events.iter().position(|e| e == name).ok_or_else(
                || {
                    crate::BadOption::new(
                        "--event",
                        format!(
                            "no event named `{name}` (events: {})",
                            analyzer.events.join(", ")
                        ),
                    )
                },
            )?),
            None => None,
        };
    let mut event = wanted;
    // Each line's index in `lines`.
    let mut folded: HashMap<String, u32> = HashMap::default();
    let mut frames: Vec<Frame> = vec![];
    // Names of frames, cached per (dso or none, symbol or address).
    let mut names: HashMap<(Option<u32>, Option<u32>, u64), String> = HashMap::default();
    // With inline frames: the `;`-joined DWARF names of an address, per (dso, address);
    // empty when it has none.
    let mut inlined: HashMap<(u32, u64), String> = HashMap::default();
    let mut line = String::new();
    let mut stack = crate::stack::Stack::default();
    // The line of each stack met, by what it is resolved from: a repeated stack (most
    // samples) costs one lookup. Forgotten when large (bounded memory).
    let mut met: HashMap<RawStack, u32> = HashMap::default();
    let mut lines: Vec<(String, u64)> = vec![];
    analyzer.run(
        crate::RunOptions::default(),
        |machine, item| -> Result<bool, crate::AnalysisError> {
            let Some(s) = &item.sample else {
                return Ok(true);
            };
            // perf script prints the period (the attr's when samples carry none).
            let count = match &opts.off_cpu {
                None => {
                    if *event.get_or_insert(s.event) != s.event {
                        return Ok(true);
                    }
                    s.period
                }
                Some(w) => match w.of(s) {
                    Some((ns, _)) => ns,
                    None => return Ok(true),
                },
            };
            let raw = RawStack::of(machine, s, &mut stack)?;
            if let Some(&i) = met.get(&raw) {
                lines[i as usize].1 += count;
                raw.give_back(&mut stack);
                return Ok(true);
            }
            stack.addrs.clone_from(&raw.addrs);
            machine.resolve_stack(s.pid, &stack, &mut frames);
            line.clear();
            line.push_str(&machine.comm(s.tid).replace(' ', "_"));
            if opts.include_tid {
                line.push_str(&format!("-{}/{}", s.pid, s.tid));
            } else if opts.include_pid {
                line.push_str(&format!("-{}", s.pid));
            }
            for f in frames.iter().rev() {
                // With inline frames, a frame that has DWARF is named by it: its function as
                // the debug info names it (not a clone's `.constprop.0` symbol) and the
                // functions inlined at the address, outermost first — what perf prints for
                // unwound frames.
                if opts.inline {
                    if let (Some((dso, map_ip)), Some(_)) = (f.dso, f.symbol) {
                        let names = inlined
                            .entry((dso.0, map_ip))
                            .or_insert_with(|| inlined_names(&machine.dsos, dso, map_ip));
                        if !names.is_empty() {
                            line.push_str(names);
                            continue;
                        }
                    }
                }
                let key = (
                    f.dso.map(|(d, _)| d.0),
                    f.symbol.map(|s| s.index),
                    match (f.symbol, f.truncated) {
                        (Some(_), _) => 0,
                        // The `[truncated]` end has no address: a key no address has.
                        (None, true) => u64::MAX,
                        (None, false) => f.ip,
                    },
                );
                let name = names
                    .entry(key)
                    .or_insert_with(|| frame_name(&machine.dsos, f));
                line.push(';');
                line.push_str(name);
            }
            let i = match folded.get(line.as_str()) {
                Some(&i) => i,
                None => {
                    lines.push((line.clone(), 0));
                    folded.insert(line.clone(), lines.len() as u32 - 1);
                    lines.len() as u32 - 1
                }
            };
            lines[i as usize].1 += count;
            if met.len() >= 1 << 16 {
                met.clear();
            }
            met.insert(raw, i);
            Ok(true)
        },
    )?;
    Ok(lines.into_iter().collect())
}

/// Writes folded stacks as `stack count` lines.
pub fn write_folded(
    out: &mut impl std::io::Write,
    folded: &BTreeMap<String, u64>,
) -> std::io::Result<()> {
    for (stack, count) in folded {
        writeln!(out, "{stack} {count}")?;
    }
    Ok(())
}
