//! Check 17: `perfdata script` against `perf script`, byte for byte, under the default
//! fields and a matrix of `-F` choices, call chain and time options and `--show-*-events`
//! flags. Where the texts differ, the consumers' view is reported too: the folded stacks
//! inferno's `collapse-perf` reads from each text.
//!
//! One difference is not a failure, as in checks 8 and 10 to 12: a sample whose call
//! chain perf's unwinder cut short where perfdata's went on to the stack's true end
//! ([`crate::cut_short`]), up to [`crate::cut_short::CUT_SHORT_MAX`] percent of the
//! samples. Everything else in such a sample (its header line, every frame perf printed)
//! must still be byte-identical.

use crate::analyses::{options, os_args, perf_stdout};
use crate::checks::Outcome;
use crate::cut_short;
use perfdata::Recording;
use perfdata_analysis::export::script::{self, fields::FieldSpec, ScriptOptions};
use perfdata_analysis::Analyzer;
use std::collections::BTreeMap;
use std::path::Path;

/// The option sets compared: perf script's arguments (each spelt as both tools take it).
pub const MATRIX: &[&[&str]] = &[
    &[],
    &["-G"],
    &["--no-inline"],
    &["-F", "comm,tid,time,ip,sym"],
    &["-F", "+period,-cpu", "--ns"],
    &[
        "-F",
        "comm,pid,tid,time,event,ip,sym,dso,symoff,period",
        "--reltime",
    ],
    &["-G", "--deltatime", "-F", "+misc,+flags,+insn,+insnlen"],
    // Synthesized records at time 0 leave perf's first time unset: the next one sets it.
    &[
        "-G",
        "--reltime",
        "--show-task-events",
        "--show-mmap-events",
    ],
    &[
        "-G",
        "--show-task-events",
        "--show-mmap-events",
        "--show-switch-events",
        "--show-lost-events",
        "--show-namespace-events",
        "--show-cgroup-events",
    ],
];

/// The header sets compared (`perfdata::header_text`, which `perfdata script --header`
/// prints before the records).
pub const HEADERS: &[&[&str]] = &[&["--header-only"], &["--header-only", "-I"]];

/// Our header text of `path`, as `perfdata script --header-only [-I]` prints it.
pub fn our_header(path: &Path, full: bool) -> Result<Vec<u8>, String> {
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let data = rec.data().map_err(|e| e.to_string())?;
    let mut opts =
        perfdata::header_text::HeaderTextOptions::for_recording(&rec).map_err(|e| e.to_string())?;
    opts.show_full_info = full;
    opts.pipe_features = false;
    let mut out = vec![];
    perfdata::header_text::write(&data, &opts, &mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// Our options for one entry of [`MATRIX`].
pub fn options_of(args: &[&str]) -> Result<ScriptOptions, String> {
    let mut o = ScriptOptions {
        fields: FieldSpec::default(),
        ..ScriptOptions::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-G" | "--hide-call-graph" => o.hide_call_graph = true,
            "--no-inline" => o.inline = false,
            "--ns" => o.time.ns = true,
            "--reltime" => o.time.reltime = true,
            "--deltatime" => o.time.deltatime = true,
            "-F" => {
                let f = it.next().ok_or("-F without fields")?;
                o.fields.apply(f).map_err(|e| e.to_string())?;
            }
            "--show-task-events" => o.show.task = true,
            "--show-mmap-events" => o.show.mmap = true,
            "--show-switch-events" => o.show.switch = true,
            "--show-lost-events" => o.show.lost = true,
            "--show-namespace-events" => o.show.namespace = true,
            "--show-cgroup-events" => o.show.cgroup = true,
            other => return Err(format!("no such option in the matrix: {other}")),
        }
    }
    Ok(o)
}

/// Our text of `path` with `opts`.
pub fn ours(path: &Path, dir: &Path, opts: &ScriptOptions) -> Result<Vec<u8>, String> {
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    // DWARF for the inlined functions and source lines, as the command reads it.
    let analyzer_opts = perfdata_analysis::AnalyzerOptions {
        lines: true,
        ..options(dir)
    };
    let mut a = Analyzer::open(&rec, &analyzer_opts).map_err(|e| e.to_string())?;
    let mut out = vec![];
    script::script(&mut a, opts, &mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// Check 17 over [`MATRIX`].
pub fn check_script(path: &Path, dir: &Path) -> Outcome {
    let mut same = 0;
    let mut lines = 0;
    let mut failures = vec![];
    let mut consumers = String::new();
    // The most samples one option set matched as cut short, and how many it printed.
    let mut cut = (0usize, 0usize);
    let mut cut_sets = 0;
    for args in MATRIX {
        let mut all = vec!["script"];
        all.extend_from_slice(args);
        all.push("-i");
        let theirs = perf_stdout(dir, &os_args(&all, path));
        let ours = options_of(args).and_then(|o| ours(path, dir, &o));
        let (theirs, ours) = match (theirs, ours) {
            (Ok(t), Ok(o)) => (t, o),
            // perf refuses the options for this recording: so must we, with its message.
            (Err(why), Err(e)) if why.ends_with(e.rsplit(": ").next().unwrap_or(&e)) => {
                same += 1;
                continue;
            }
            (Err(why), _) => {
                failures.push(format!("[{}] {why}", args.join(" ")));
                continue;
            }
            (_, Err(e)) => {
                failures.push(format!("[{}] ours: {e}", args.join(" ")));
                continue;
            }
        };
        if args.is_empty() {
            // The consumers' view: inferno's collapse-perf reads both texts alike.
            match (inferno_folds(&theirs), inferno_folds(&ours)) {
                (Ok(t), Ok(o)) if t == o => {
                    consumers = format!("; inferno folds {} stacks alike", t.lines().count())
                }
                (Ok(t), Ok(o)) => match folds_alike_but_cut_short(&t, &o) {
                    Some(n) => {
                        consumers = format!(
                            "; inferno folds {} stacks alike once the weight {n} of stacks \
                             perf's unwinder cut short is matched to ours",
                            o.lines().count()
                        )
                    }
                    None => failures.push(format!(
                        "inferno folds perf's text into {} stacks, ours into {} (differing)",
                        t.lines().count(),
                        o.lines().count()
                    )),
                },
                (Err(e), _) | (_, Err(e)) => failures.push(format!("inferno: {e}")),
            }
        }
        if theirs == ours {
            same += 1;
            lines += theirs.iter().filter(|&&b| b == b'\n').count();
            continue;
        }
        match same_but_cut_short(&theirs, &ours) {
            Some((n, samples)) => {
                cut_sets += 1;
                lines += theirs.iter().filter(|&&b| b == b'\n').count();
                if n > cut.0 {
                    cut = (n, samples);
                }
            }
            None => failures.push(first_difference(args, &theirs, &ours)),
        }
    }
    for args in HEADERS {
        let mut all = vec!["script"];
        all.extend_from_slice(args);
        all.push("-i");
        let theirs = perf_stdout(dir, &os_args(&all, path));
        let ours = our_header(path, args.contains(&"-I"));
        match (theirs, ours) {
            (Ok(t), Ok(o)) if t == o => same += 1,
            (Ok(t), Ok(o)) => failures.push(first_difference(args, &t, &o)),
            (Err(why), _) => failures.push(format!("[{}] {why}", args.join(" "))),
            (_, Err(e)) => failures.push(format!("[{}] ours: {e}", args.join(" "))),
        }
    }
    let cut_note = if cut.0 > 0 {
        format!(
            "; {cut_sets} more alike but for the call chains perf's unwinder cut short and \
             perfdata finished (at most {} of {} samples; see conformance/src/cut_short.rs)",
            cut.0, cut.1
        )
    } else {
        String::new()
    };
    if failures.is_empty() {
        Outcome::Pass(format!(
            "{same} option sets byte-identical ({lines} lines){consumers}{cut_note}"
        ))
    } else {
        failures.insert(
            0,
            format!(
                "{same}/{} option sets byte-identical{}",
                MATRIX.len() + HEADERS.len(),
                if cut_sets > 0 {
                    format!(", {cut_sets} alike but for cut-short call chains")
                } else {
                    String::new()
                }
            ),
        );
        Outcome::Fail(failures)
    }
}

/// inferno's `collapse-perf` of a perf script text.
fn inferno_folds(text: &[u8]) -> Result<String, String> {
    use inferno::collapse::Collapse;
    let mut folded = vec![];
    inferno::collapse::perf::Folder::from(inferno::collapse::perf::Options::default())
        .collapse(text, &mut folded)
        .map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&folded).into_owned())
}

/// When the texts differ only in samples whose call chain perf's unwinder cut short (see
/// [`cut_short::is_cut_short`]), no more than [`cut_short::CUT_SHORT_MAX`] percent of
/// them: how many such samples, and how many samples in all. A sample is a header line
/// and its frame lines (indented with a tab) up to a blank line; in a cut one, the header
/// and every frame line of perf's but its root-most one (where perf's walk can go one
/// frame astray before it stops) are ours, line for line.
fn same_but_cut_short(theirs: &[u8], ours: &[u8]) -> Option<(usize, usize)> {
    let (t, o) = (
        String::from_utf8_lossy(theirs),
        String::from_utf8_lossy(ours),
    );
    let (t, o) = (samples(&t), samples(&o));
    if t.len() != o.len() {
        return None;
    }
    let mut cut = 0;
    for (a, b) in t.iter().zip(&o) {
        if a == b {
            continue;
        }
        let (Some((ah, af)), Some((bh, bf))) = (a.split_first(), b.split_first()) else {
            return None;
        };
        let alike = af.iter().zip(bf).take_while(|(x, y)| x == y).count();
        let framed = |f: &[&str]| f.iter().all(|l| l.starts_with('\t'));
        if ah != bh
            || !framed(af)
            || !framed(bf)
            || alike + 1 < af.len()
            || !cut_short::is_cut_short(&root_first(af), &root_first(bf))
        {
            return None;
        }
        cut += 1;
    }
    let within = cut as f64 * 100.0 <= cut_short::CUT_SHORT_MAX * t.len() as f64;
    (cut > 0 && within).then_some((cut, t.len()))
}

/// The samples of a perf script text: each one's lines, up to a blank line.
fn samples(text: &str) -> Vec<Vec<&str>> {
    text.split("\n\n")
        .map(|s| s.lines().collect::<Vec<_>>())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A sample's frame lines (leaf first) as the folded stack `root;…;leaf` of their
/// function names (`sym+0x1f` without its offset; perf's `ffffffffffffffff` end of an
/// unfinished walk as `[truncated]`, the name [`cut_short`] knows it by).
fn root_first(frames: &[&str]) -> String {
    let names: Vec<&str> = frames
        .iter()
        .rev()
        .map(|l| {
            let mut words = l.split_whitespace();
            match (words.next(), words.next()) {
                (Some("ffffffffffffffff"), _) => "[truncated]",
                (_, Some(sym)) => sym.split_once("+0x").map_or(sym, |(name, _)| name),
                (Some(addr), None) => addr,
                (None, _) => "",
            }
        })
        .collect();
    names.join(";")
}

/// When inferno's folded stacks of the two texts (`stack count` lines) are alike once
/// each stack perf's unwinder cut short is matched to ours ([`cut_short::reconcile_folded`]),
/// within [`cut_short::CUT_SHORT_MAX`] percent of the weight: the weight so matched.
fn folds_alike_but_cut_short(theirs: &str, ours: &str) -> Option<u64> {
    let parse = |text: &str| -> Option<BTreeMap<String, u64>> {
        let mut m = BTreeMap::new();
        for line in text.lines() {
            let (stack, n) = line.rsplit_once(' ')?;
            *m.entry(stack.to_string()).or_default() += n.parse::<u64>().ok()?;
        }
        Some(m)
    };
    let (mut t, o) = (parse(theirs)?, parse(ours)?);
    let total: u64 = t.values().sum();
    let moved = cut_short::reconcile_folded(&mut t, &o);
    let within = moved as f64 * 100.0 <= cut_short::CUT_SHORT_MAX * total as f64;
    (t == o && moved > 0 && within).then_some(moved)
}

/// The first line that differs, and how many do.
fn first_difference(args: &[&str], theirs: &[u8], ours: &[u8]) -> String {
    let t = String::from_utf8_lossy(theirs);
    let o = String::from_utf8_lossy(ours);
    let (tl, ol): (Vec<&str>, Vec<&str>) = (t.lines().collect(), o.lines().collect());
    let differ = tl.iter().zip(&ol).filter(|(a, b)| a != b).count() + tl.len().abs_diff(ol.len());
    let at = tl
        .iter()
        .zip(&ol)
        .position(|(a, b)| a != b)
        .unwrap_or(tl.len().min(ol.len()));
    format!(
        "[{}] {differ} of {} lines differ; first at line {}: perf {:?}, ours {:?}",
        args.join(" "),
        tl.len(),
        at + 1,
        tl.get(at).copied().unwrap_or("<end>"),
        ol.get(at).copied().unwrap_or("<end>")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_matrix_entry_is_understood() {
        for args in MATRIX {
            options_of(args).unwrap();
        }
    }

    /// A text of `n` samples of one frame each, the last with `tail` as its chain.
    fn text(n: usize, tail: &[&str]) -> String {
        let mut out = String::new();
        for i in 0..n {
            out += &format!("prog  1129 [000]     1.{i:06}:     250000 cpu-clock:ppp: \n");
            if i + 1 < n {
                out += "\t            1000 work+0x10 (/x/prog)\n\n";
            } else {
                for f in tail {
                    out += &format!("\t            1000 {f} (/x/prog)\n");
                }
                out += "\n";
            }
        }
        out
    }

    #[test]
    fn a_chain_perf_cut_short_and_ours_finished_is_matched_within_the_bound() {
        let ours = [
            "_fini+0x4",
            "_dl_call_fini+0x49",
            "exit+0x1a",
            "_start+0x25",
        ];
        let t = text(40, &ours[..1]);
        let o = text(40, &ours);
        assert_eq!(
            same_but_cut_short(t.as_bytes(), o.as_bytes()),
            Some((1, 40))
        );
        // perf said it stopped (its ffffffffffffffff frame), ours went on: matched too
        let said = t.replacen(
            "1000 _fini+0x4 (/x/prog)\n",
            "1000 _fini+0x4 (/x/prog)\n\t ffffffffffffffff [unknown] ([unknown])\n",
            1,
        );
        assert_eq!(
            same_but_cut_short(said.as_bytes(), o.as_bytes()),
            Some((1, 40))
        );
    }

    #[test]
    fn other_differences_are_not_matched_as_cut_short() {
        let ours = [
            "_fini+0x4",
            "_dl_call_fini+0x49",
            "exit+0x1a",
            "_start+0x25",
        ];
        let o = text(40, &ours);
        // ours cut short, perf finished
        assert_eq!(
            same_but_cut_short(o.as_bytes(), text(40, &ours[..1]).as_bytes()),
            None
        );
        // our longer chain ends nowhere outermost: perfdata may have invented frames
        let unfinished = text(40, &ours[..3]);
        assert_eq!(
            same_but_cut_short(text(40, &ours[..1]).as_bytes(), unfinished.as_bytes()),
            None
        );
        // a header differs too
        let t = text(40, &ours[..1]).replacen("250000", "250001", 1);
        assert_eq!(same_but_cut_short(t.as_bytes(), o.as_bytes()), None);
        // one sample of 10 is over the bound (5%)
        assert_eq!(
            same_but_cut_short(text(10, &ours[..1]).as_bytes(), text(10, &ours).as_bytes()),
            None
        );
    }

    #[test]
    fn inferno_folds_alike_once_cut_stacks_are_matched() {
        let t = "prog;main;work 38\nprog;_fini 1\nprog;main 1\n";
        let o = "prog;main;work 38\nprog;_start;exit;_dl_call_fini;_fini 1\nprog;main 1\n";
        assert_eq!(folds_alike_but_cut_short(t, o), Some(1));
        let other = "prog;main;work 38\nprog;_start;exit;other 1\nprog;main 1\n";
        assert_eq!(folds_alike_but_cut_short(t, other), None);
    }
}
