//! Check 14: `perfdata diff` against `perf diff`, byte for byte. Each recorded row (but
//! the system-wide ones) is compared with the `plain` row's recording as the baseline (two recordings of the same
//! shell workload for most rows, other programs and events for the rest), with the
//! default computation (`delta-abs`), `ratio`, and `wdiff` with the period and formula
//! columns and the `comm,dso,sym` keys. perf's text is deterministic for these: the rows'
//! order is a total order (value, baseline period, then the keys' names).
//!
//! Then perf's filters (check 13's, values taken from the new recording) given alike to
//! both, with the period and formula columns (the formula shows both totals, which the
//! hidden samples are part of): a thread filter with the `pid` key and a `--comms`
//! filter with the `comm` key (perf decides whether an entry is hidden by its first
//! sample: keyed by the filtered value, every entry is one thread's or command's), an
//! absolute `--time` as `OLD:NEW` (each recording's own middle half), and one
//! `--percentage relative` case.

use crate::analyses::{options, perf_stdout};
use crate::checks::Outcome;
use crate::filters;
use perfdata::Recording;
use perfdata_analysis::analyses::diff::{self, Compute, DiffKey, DiffOptions};
use perfdata_analysis::filter::{SampleFilter, TimeSpec};
use perfdata_analysis::Analyzer;
use std::path::Path;

/// One comparison: perf diff's arguments, our options, and the filters of the baseline
/// and of the new recording.
struct Case {
    args: Vec<String>,
    opts: DiffOptions,
    filters: (SampleFilter, SampleFilter),
}

/// The `perf diff` argument sets compared without filters, with the options they
/// stand for.
fn computations() -> Vec<(Vec<&'static str>, DiffOptions)> {
    let base = DiffOptions::default();
    vec![
        (vec![], base.clone()),
        (
            vec!["-c", "ratio"],
            DiffOptions {
                compute: Compute::Ratio,
                ..base.clone()
            },
        ),
        (
            vec!["-c", "wdiff:1,2", "-p", "-F", "-s", "comm,dso,sym"],
            DiffOptions {
                compute: Compute::Wdiff(1, 2),
                show_period: true,
                show_formula: true,
                sort: vec![DiffKey::Comm, DiffKey::Dso, DiffKey::Sym],
                ..base
            },
        ),
    ]
}

/// The filtered comparisons (see the module's documentation).
fn filtered(old: &Path, new: &Path, dir: &Path) -> Result<Vec<Case>, String> {
    let (found, _) = filters::cases(new, dir)?;
    let (old_cpu, old_window) = {
        let rec = Recording::open(old).map_err(|e| e.to_string())?;
        let mut a = Analyzer::open(&rec, &options(dir)).map_err(|e| e.to_string())?;
        let (cpu, span, _) = filters::sample_facts(&rec, &mut a)?;
        (
            cpu,
            span.map(|(first, last)| filters::middle_window(first, last)),
        )
    };
    let mut cases = vec![];
    for c in found {
        if c.args[0] == "--cpu" && old_cpu.is_none() {
            // perf diff refuses it ("File does not contain CPU events"), as we do.
            continue;
        }
        let mut args = c.args.clone();
        let (mut old_filter, new_filter) = (c.filter.clone(), c.filter.clone());
        if args[0] == "--time" && !args[1].contains('%') {
            // An absolute window of the new recording selects nothing of the old one.
            let Some(w) = &old_window else { continue };
            old_filter.time = Some(TimeSpec::parse(w, false).map_err(|e| e.to_string())?);
            args[1] = format!("{w}:{}", args[1]);
        }
        let sort = match args[0].as_str() {
            "--pid" | "--tid" => vec![DiffKey::Pid, DiffKey::Dso, DiffKey::Sym],
            "--comms" => vec![DiffKey::Comm, DiffKey::Dso, DiffKey::Sym],
            _ => vec![DiffKey::Dso, DiffKey::Sym],
        };
        let keys: Vec<&str> = sort
            .iter()
            .map(|k| match k {
                DiffKey::Pid => "pid",
                DiffKey::Comm => "comm",
                DiffKey::Dso => "dso",
                DiffKey::Sym => "sym",
            })
            .collect();
        args.extend(["-p".into(), "-F".into(), "-s".into(), keys.join(",")]);
        let opts = DiffOptions {
            elide: diff::elided(&c.filter, &sort),
            sort,
            show_period: true,
            show_formula: true,
            ..DiffOptions::default()
        };
        cases.push(Case {
            args,
            opts,
            filters: (old_filter, new_filter),
        });
    }
    // Shares of what is shown, on the first filter (a command's).
    if let Some(first) = cases.first() {
        let mut args = first.args.clone();
        args.extend(["--percentage".into(), "relative".into()]);
        cases.push(Case {
            args,
            opts: DiffOptions {
                relative: true,
                ..first.opts.clone()
            },
            filters: first.filters.clone(),
        });
    }
    Ok(cases)
}

/// Check 14 of `new` against the baseline `old`.
pub fn check_diff(old: &Path, new: &Path, dir: &Path) -> Outcome {
    let mut cases: Vec<Case> = computations()
        .into_iter()
        .map(|(args, opts)| Case {
            args: args.into_iter().map(String::from).collect(),
            opts,
            filters: Default::default(),
        })
        .collect();
    let unfiltered = cases.len();
    match filtered(old, new, dir) {
        Ok(f) => cases.extend(f),
        Err(e) => return Outcome::Fail(vec![format!("choosing the filters: {e}")]),
    }
    let mut compared = 0;
    for c in &cases {
        let mut perf_args: Vec<&std::ffi::OsStr> = vec!["diff".as_ref()];
        perf_args.extend(c.args.iter().map(std::ffi::OsStr::new));
        perf_args.push(old.as_os_str());
        perf_args.push(new.as_os_str());
        let theirs = match perf_stdout(dir, &perf_args) {
            Ok(o) => String::from_utf8_lossy(&o).into_owned(),
            Err(why) => return Outcome::Skip(why),
        };
        let ours = match our_diff(old, new, dir, c) {
            Ok(t) => t,
            Err(e) => return Outcome::Fail(vec![format!("our diff: {e}")]),
        };
        if theirs != ours {
            return Outcome::Fail(first_difference(&c.args, &theirs, &ours));
        }
        compared += theirs.lines().count();
    }
    let names: Vec<&str> = cases[unfiltered..]
        .iter()
        .map(|c| c.args[0].as_str())
        .collect();
    Outcome::Pass(format!(
        "{compared} lines of perf diff equal ({unfiltered} computations; filtered: {})",
        names.join(" ")
    ))
}

fn our_diff(old: &Path, new: &Path, dir: &Path, c: &Case) -> Result<String, String> {
    let profile = |p: &Path, filter: &SampleFilter| -> Result<diff::Profile, String> {
        let rec = Recording::open(p).map_err(|e| e.to_string())?;
        let mut o = options(dir);
        o.filter = filter.clone();
        let mut a = Analyzer::open(&rec, &o).map_err(|e| e.to_string())?;
        diff::profile(&mut a, &c.opts.sort, !c.opts.relative).map_err(|e| e.to_string())
    };
    let diffs = diff::diff(
        &profile(old, &c.filters.0)?,
        &profile(new, &c.filters.1)?,
        &c.opts,
    );
    Ok(diff::render(&diffs, &c.opts))
}

fn first_difference(args: &[String], theirs: &str, ours: &str) -> Vec<String> {
    let (t, o): (Vec<&str>, Vec<&str>) = (theirs.lines().collect(), ours.lines().collect());
    let at = t
        .iter()
        .zip(&o)
        .position(|(a, b)| a != b)
        .unwrap_or(t.len().min(o.len()));
    vec![
        format!(
            "perf diff {}: {} lines (perf) / {} (ours), first difference at line {}",
            args.join(" "),
            t.len(),
            o.len(),
            at + 1
        ),
        format!("perf: {:?}", t.get(at).unwrap_or(&"<end>")),
        format!("ours: {:?}", o.get(at).unwrap_or(&"<end>")),
    ]
}
