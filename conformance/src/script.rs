//! Check 17: `perfdata script` against `perf script`, byte for byte, under the default
//! fields and a matrix of `-F` choices, call chain and time options and `--show-*-events`
//! flags. Where the texts differ, the consumers' view is reported too: the folded stacks
//! inferno's `collapse-perf` reads from each text.

use crate::analyses::{options, os_args, perf_stdout};
use crate::checks::Outcome;
use perfdata::Recording;
use perfdata_analysis::export::script::{self, fields::FieldSpec, ScriptOptions};
use perfdata_analysis::Analyzer;
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
                (Ok(t), Ok(o)) => failures.push(format!(
                    "inferno folds perf's text into {} stacks, ours into {} (differing)",
                    t.lines().count(),
                    o.lines().count()
                )),
                (Err(e), _) | (_, Err(e)) => failures.push(format!("inferno: {e}")),
            }
        }
        if theirs == ours {
            same += 1;
            lines += theirs.iter().filter(|&&b| b == b'\n').count();
            continue;
        }
        failures.push(first_difference(args, &theirs, &ours));
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
    if failures.is_empty() {
        Outcome::Pass(format!(
            "{same} option sets byte-identical ({lines} lines){consumers}"
        ))
    } else {
        failures.insert(
            0,
            format!(
                "{same}/{} option sets byte-identical",
                MATRIX.len() + HEADERS.len()
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
}
