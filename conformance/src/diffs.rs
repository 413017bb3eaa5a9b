//! Check 14: `perfdata diff` against `perf diff`, byte for byte. Each recorded row (but
//! the system-wide ones) is compared with the `plain` row's recording as the baseline (two recordings of the same
//! shell workload for most rows, other programs and events for the rest), with the
//! default computation (`delta-abs`), `ratio`, and `wdiff` with the period and formula
//! columns and the `comm,dso,sym` keys. perf's text is deterministic for these: the rows'
//! order is a total order (value, baseline period, then the keys' names).

use crate::analyses::{options, perf_stdout};
use crate::checks::Outcome;
use perfdata::Recording;
use perfdata_analysis::diff::{self, Compute, DiffKey, DiffOptions};
use perfdata_analysis::Analyzer;
use std::path::Path;

/// The `perf diff` argument sets compared, with the options they stand for.
fn cases() -> Vec<(Vec<&'static str>, DiffOptions)> {
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

/// Check 14 of `new` against the baseline `old`.
pub fn check_diff(old: &Path, new: &Path, dir: &Path) -> Outcome {
    let mut compared = 0;
    for (args, opts) in cases() {
        let mut perf_args: Vec<&std::ffi::OsStr> = vec!["diff".as_ref()];
        perf_args.extend(args.iter().map(std::ffi::OsStr::new));
        perf_args.push(old.as_os_str());
        perf_args.push(new.as_os_str());
        let theirs = match perf_stdout(dir, &perf_args) {
            Ok(o) => String::from_utf8_lossy(&o).into_owned(),
            Err(why) => return Outcome::Skip(why),
        };
        let ours = match our_diff(old, new, dir, &opts) {
            Ok(t) => t,
            Err(e) => return Outcome::Fail(vec![format!("our diff: {e}")]),
        };
        if theirs != ours {
            return Outcome::Fail(first_difference(&args, &theirs, &ours));
        }
        compared += theirs.lines().count();
    }
    Outcome::Pass(format!(
        "{compared} lines of perf diff equal ({} computations)",
        cases().len()
    ))
}

fn our_diff(old: &Path, new: &Path, dir: &Path, opts: &DiffOptions) -> Result<String, String> {
    let profile = |p: &Path| -> Result<diff::Profile, String> {
        let rec = Recording::open(p).map_err(|e| e.to_string())?;
        let mut a = Analyzer::open(&rec, &options(dir)).map_err(|e| e.to_string())?;
        diff::profile(&mut a, &opts.sort).map_err(|e| e.to_string())
    };
    let diffs = diff::diff(&profile(old)?, &profile(new)?, opts);
    Ok(diff::render(&diffs, opts))
}

fn first_difference(args: &[&str], theirs: &str, ours: &str) -> Vec<String> {
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
