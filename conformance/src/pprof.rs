//! Check 16 (pprof): our pprof export (`perfdata_analysis::export::pprof`, what `perfdata export
//! --to pprof` writes) read by the real `go tool pprof`, without the binaries
//! (`-symbolize=none`), for every event with samples:
//! * `-top -nodecount=1000 -nodefraction=0` (no node dropped as small) of the export without inline frames: the total equals
//!   `perfdata report`'s period and every function's flat value equals the report's rows
//!   of that symbol summed (exactly, in the event's unit);
//! * `-traces` of the export with inline frames (the default): the stacks, folded as
//!   `thread_comm;root;…;leaf` and weighted by period, equal `perfdata collapse --inline`
//!   exactly.

use crate::checks::{Outcome, SHOW};
use crate::gperftools::Tools;
use perfdata::Recording;
use perfdata_analysis::analyses::collapse::{self, CollapseOptions};
use perfdata_analysis::analyses::report::{self, ReportOptions, SortKey};
use perfdata_analysis::export::pprof;
use perfdata_analysis::export::sampled::{self, GatherOptions};
use perfdata_analysis::symbols::naming::tidy_generic;
use perfdata_analysis::Analyzer;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Runs check 16 on a recording; its exports go to `work/pprof/`.
pub(crate) fn check_pprof(path: &Path, work: &Path, tools: &Tools) -> Outcome {
    if let Err(why) = &tools.go {
        return Outcome::Skip(why.clone());
    }
    match compare(path, work, tools) {
        Ok(o) => o,
        Err(e) => Outcome::Fail(vec![e]),
    }
}

fn compare(path: &Path, work: &Path, tools: &Tools) -> Result<Outcome, String> {
    let dir = work.join("pprof");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let stem = path
        .file_name()
        .map_or("profile".into(), |n| n.to_string_lossy().into_owned());
    let inline = export(path, work, true, &dir.join(format!("{stem}.pb.gz")))?;
    let plain = export(
        path,
        work,
        false,
        &dir.join(format!("{stem}.noinline.pb.gz")),
    )?;
    let Some((events, inline_path)) = inline else {
        return Ok(Outcome::Skip("no samples".into()));
    };
    let (_, plain_path) = plain.expect("the same samples");
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let report = {
        let mut a =
            Analyzer::open(&rec, &crate::analyses::options(work)).map_err(|e| e.to_string())?;
        let opts = ReportOptions {
            sort: vec![SortKey::Dso, SortKey::Sym],
            ..ReportOptions::table(Vec::new())
        };
        report::report(&mut a, &opts).map_err(|e| e.to_string())?
    };
    let mut problems = vec![];
    let (mut functions, mut stacks) = (0, 0);
    for (column, event) in events.iter().enumerate() {
        let index = (2 * column + 1).to_string();
        let ours = report.iter().find(|r| &r.event == event);
        // -top: total and flat values per function against the report.
        let top = go(
            tools,
            &[
                "-top",
                "-nodecount=1000",
                "-nodefraction=0",
                "-sample_index",
                &index,
            ],
            &plain_path,
        )?;
        let (total, flat, complete) = parse_top(&top)?;
        let Some(ours) = ours else {
            problems.push(format!("{event}: pprof has samples, perfdata report none"));
            continue;
        };
        if total != ours.period {
            problems.push(format!(
                "{event}: pprof total {total}, perfdata report {}",
                ours.period
            ));
        }
        let mut by_name: BTreeMap<String, u64> = BTreeMap::new();
        for row in &ours.rows {
            *by_name
                .entry(report_name(&row.keys[0], &row.keys[1]))
                .or_default() += row.period;
        }
        for (name, v) in &flat {
            functions += 1;
            let theirs = by_name.get(name).copied().unwrap_or(0);
            if theirs != *v {
                problems.push(format!(
                    "{event}: {name}: pprof flat {v}, perfdata report {theirs}"
                ));
            }
        }
        if complete {
            for (name, v) in &by_name {
                if *v != 0 && !flat.contains_key(name) {
                    problems.push(format!("{event}: {name} ({v}) missing in pprof -top"));
                }
            }
        }
        // -traces: the stacks against collapse --inline.
        let traces = go(tools, &["-traces", "-sample_index", &index], &inline_path)?;
        let theirs = parse_traces(&traces)?;
        let folded = {
            let mut o = crate::analyses::options(work);
            o.lines = true;
            let mut a = Analyzer::open(&rec, &o).map_err(|e| e.to_string())?;
            let opts = CollapseOptions {
                event: Some(event.clone()),
                inline: true,
                ..CollapseOptions::default()
            };
            collapse::collapse(&mut a, &opts).map_err(|e| e.to_string())?
        };
        let mine: BTreeMap<String, u64> = folded
            .into_iter()
            .map(|(k, v)| {
                (
                    k.split(';')
                        .map(unknown_as_pprof)
                        .collect::<Vec<_>>()
                        .join(";"),
                    v,
                )
            })
            .fold(BTreeMap::new(), |mut m, (k, v)| {
                *m.entry(k).or_default() += v;
                m
            });
        stacks += mine.len();
        for (k, v) in &mine {
            let t = theirs.get(k).copied().unwrap_or(0);
            if t != *v {
                problems.push(format!(
                    "{event}: {}: collapse {v}, pprof -traces {t}",
                    crate::analyses::show_stack(k)
                ));
            }
        }
        for (k, t) in &theirs {
            if !mine.contains_key(k) {
                problems.push(format!(
                    "{event}: {}: pprof -traces {t}, not in collapse",
                    crate::analyses::show_stack(k)
                ));
            }
        }
    }
    if problems.is_empty() {
        return Ok(Outcome::Pass(format!(
            "{} event(s): totals, {functions} functions' flat values and {stacks} stacks equal",
            events.len()
        )));
    }
    let n = problems.len();
    problems.truncate(SHOW);
    problems.push(format!("{n} difference(s)"));
    Ok(Outcome::Fail(problems))
}

/// Writes our pprof export of `path`: the names of its events with samples (in column
/// order) and the file; `None` without samples.
fn export(
    path: &Path,
    work: &Path,
    inline: bool,
    out: &Path,
) -> Result<Option<(Vec<String>, PathBuf)>, String> {
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let mut o = crate::analyses::options(work);
    o.lines = inline;
    let mut a = Analyzer::open(&rec, &o).map_err(|e| e.to_string())?;
    let opts = GatherOptions {
        inline,
        ..GatherOptions::default()
    };
    let g = sampled::gather(&mut a, &opts).map_err(|e| format!("export: {e}"))?;
    let events: Vec<String> = g
        .events
        .iter()
        .filter(|e| e.samples > 0)
        .map(|e| e.name.clone())
        .collect();
    if events.is_empty() {
        return Ok(None);
    }
    let profile = pprof::Pprof::from_sampled(g, &pprof::PprofOptions::default());
    let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    profile
        .write(std::io::BufWriter::new(file))
        .map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(Some((events, out.to_path_buf())))
}

/// `go tool pprof -symbolize=none -unit=ns ARGS FILE` (values in the event's own unit:
/// nanoseconds stay nanoseconds, counts are printed as they are, with an `ns` suffix).
fn go(tools: &Tools, args: &[&str], file: &Path) -> Result<String, String> {
    use std::ffi::OsStr;
    let mut all: Vec<&OsStr> = ["tool", "pprof", "-symbolize=none", "-unit=ns"]
        .iter()
        .chain(args)
        .map(OsStr::new)
        .collect();
    all.push(file.as_os_str());
    tools.output("go", &all).map_err(|e| format!("{e:#}"))
}

/// A value as pprof prints it under `-unit=ns`: `12345ns` (or `0`).
fn value(text: &str) -> Result<u64, String> {
    let t = text.trim().trim_end_matches("ns");
    t.parse::<f64>()
        .map(|v| v.round() as u64)
        .map_err(|_| format!("pprof value `{text}`"))
}

/// `-top`: the total, flat value per function (tidied as collapse names it), and whether
/// every node was listed.
fn parse_top(text: &str) -> Result<(u64, BTreeMap<String, u64>, bool), String> {
    let mut total = None;
    let mut complete = true;
    let mut flat = BTreeMap::new();
    let mut in_table = false;
    for line in text.lines() {
        // "Showing nodes accounting for X, 100% of TOTAL total" (the header's "Total
        // samples" is printed only with a nonzero duration: not for a single sample).
        if let Some((_, rest)) = line
            .strip_prefix("Showing nodes accounting for ")
            .and_then(|r| r.split_once(" of "))
        {
            total = Some(value(rest.trim_end_matches(" total"))?);
        } else if line.starts_with("Showing top ") {
            // "Showing top 1000 nodes out of 1234".
            let n: Vec<&str> = line.split_whitespace().collect();
            complete = n.get(2) == n.get(6);
        } else if line.trim_start().starts_with("flat ") {
            in_table = true;
        } else if in_table {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 6 {
                continue;
            }
            let name = unknown_as_pprof(&tidy_generic(cols[5..].join(" ")));
            *flat.entry(name).or_default() += value(cols[0])?;
        }
    }
    let total = total.ok_or("no `Showing nodes accounting for` line in pprof -top")?;
    flat.retain(|_, v| *v != 0);
    Ok((total, flat, complete))
}

/// `-traces`: folded stacks `thread_comm;root;…;leaf` → value (samples with value 0,
/// another event's, left out).
fn parse_traces(text: &str) -> Result<BTreeMap<String, u64>, String> {
    let mut out = BTreeMap::new();
    let sep = "-----------+";
    for block in text.split(sep).skip(1) {
        let mut comm = String::new();
        let mut frames: Vec<String> = vec![];
        let mut v = None;
        for line in block.lines().skip(1) {
            let t = line.trim_start();
            // A label: "%10s:  %s" (a key is one identifier).
            if let Some((k, val)) = t.split_once(":  ") {
                if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    if k == "thread_comm" {
                        comm = val.trim().replace(' ', "_");
                    }
                    continue;
                }
            }
            // A frame: "%10s   %s", the value (which can be wider than 10) on the first
            // frame line only.
            let name = match t.split_once("   ") {
                Some((head, rest)) if v.is_none() && !head.contains(' ') => {
                    v = Some(value(head)?);
                    rest
                }
                _ => t,
            };
            if name.is_empty() {
                continue;
            }
            let name = name.trim_end_matches(" (inline)");
            frames.push(unknown_as_pprof(&tidy_generic(name.to_string())));
        }
        let Some(v) = v.filter(|&v| v != 0) else {
            continue;
        };
        frames.reverse();
        let key = std::iter::once(comm)
            .chain(frames)
            .collect::<Vec<_>>()
            .join(";");
        *out.entry(key).or_default() += v;
    }
    Ok(out)
}

/// collapse's `[unknown]` (no map) is pprof's `<unknown>` (no mapping, no function).
fn unknown_as_pprof(name: &str) -> String {
    if name == "[unknown]" {
        "<unknown>".into()
    } else {
        name.to_string()
    }
}

/// A report row (dso, `[.] sym`) as pprof names its function: the symbol, or for an
/// address without one the object in brackets (`[libc.so.6]`), `<unknown>` outside any.
fn report_name(dso: &str, sym: &str) -> String {
    let sym = sym.get(4..).unwrap_or("");
    if sym.starts_with("0x") {
        if dso == "[unknown]" {
            "<unknown>".into()
        } else {
            format!("[{}]", dso.rsplit('/').next().unwrap_or(dso))
        }
    } else {
        unknown_as_pprof(&tidy_generic(sym.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pprof_traces_into_folded_stacks() {
        let text = "File: x\nType: cpu\n-----------+----------\n      comm:  a b\nthread_comm:  a b\n       pid:  1\n       tid:  1\n309500000ns   leaf\n             inl (inline)\n             <unknown>\n-----------+----------\n      comm:  a\nthread_comm:  a\n         0   other\n-----------+----------\n";
        let t = parse_traces(text).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t["a_b;<unknown>;inl;leaf"], 309500000);
    }

    #[test]
    fn parses_pprof_top() {
        let text = "Type: cpu\nShowing nodes accounting for 48ns, 29.09% of 165ns total\nShowing top 5 nodes out of 71\n      flat  flat%   sum%        cum   cum%\n      13ns  7.88%  7.88%       13ns  7.88%  f(int)\n      12ns  7.27% 15.15%       12ns  7.27%  [dash]\n";
        let (total, flat, complete) = parse_top(text).unwrap();
        assert_eq!(total, 165);
        assert!(!complete);
        assert_eq!(flat["f"], 13);
        assert_eq!(flat["[dash]"], 12);
    }
}
