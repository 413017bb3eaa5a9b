//! Checks 10 and 11, on the scenarios recorded with `--call-graph dwarf` (the sampled
//! user registers and stack copy, which perf unwinds with the objects' CFI):
//!
//! 10 (unwind): perfdata's folded stacks with inline frames (`perfdata collapse --inline`:
//!    `collapse` with `CollapseOptions::inline` and `AnalyzerOptions::lines`) against
//!    inferno's folding of `perf script --inline`. Both are multisets stack → weight
//!    (period); the agreement is the weight both give the same stack string,
//!    Σ min(ours, perf's), over perf's total. It passes at ≥ 99%.
//! 11 (call graph): `perf report --stdio -n --no-children --no-inline -g
//!    folded,0,caller,function,percent --sort comm,dso,sym` against `perfdata report
//!    --no-children -g folded,0,caller`, row by row: every chain of a row (root first,
//!    ending with the sampled function) and its share of the event's period, to 0.01%.
//!    perfdata's report has no inline frames, hence perf's `--no-inline`.
//! 12 (unwound): `perfdata convert --unwind` rewrites the recording into a `-g` one;
//!    perf reads it, and inferno's folding of its `perf script --no-inline` equals that
//!    of the original's (which perf unwinds) on ≥ 99% of the weight. Stacks are compared
//!    without their `[truncated]` end: a callchain cannot say that a walk was cut.
//!    perf 6.1 does not unwind a 32-bit task: there perfdata's own folding of the
//!    original is the reference.

use crate::analyses::{
    options, os_args, parse_folded, parse_perf_report_chains, perf_folded, perf_stdout, show_stack,
    ChainRows, Folded,
};
use crate::checks::Outcome;
use crate::cut_short;
use perfdata::Recording;
use perfdata_analysis::analyses::{collapse, report};
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::collections::BTreeMap;
use std::path::Path;

/// The agreement check 10 needs, in percent of perf's weight.
pub const UNWIND_PASS: f64 = 99.0;

/// Differing stacks (or chains) a failure lists, per side.
const SHOW_STACKS: usize = 3;

/// Check 10.
pub fn check_unwind(path: &Path, dir: &Path) -> Outcome {
    let theirs = match perf_folded(path, dir, &["--inline"]) {
        Ok(t) => parse_folded(&t),
        Err(why) => return Outcome::Skip(why),
    };
    let ours = match (|| -> Result<Folded, String> {
        let rec = Recording::open(path).map_err(|e| e.to_string())?;
        let opts = AnalyzerOptions {
            lines: true,
            ..options(dir)
        };
        let mut a = Analyzer::open(&rec, &opts).map_err(|e| e.to_string())?;
        let copts = collapse::CollapseOptions {
            inline: true,
            ..collapse::CollapseOptions::default()
        };
        collapse::collapse(&mut a, &copts).map_err(|e| e.to_string())
    })() {
        Ok(f) => f,
        Err(e) => return Outcome::Fail(vec![format!("our collapse --inline: {e}")]),
    };
    compare_folded(&theirs, &ours)
}

/// Check 12.
pub fn check_unwound(path: &Path, dir: &Path, task_32: bool) -> Outcome {
    let out = path.with_extension("unwound.data");
    let rewrite = || -> Result<(), perfdata_analysis::AnalysisError> {
        let recording = Recording::open(path)?;
        let mut a = Analyzer::open(&recording, &AnalyzerOptions::default())?;
        perfdata::write::save_checked_as(&out, |w| {
            perfdata_analysis::rewrite::unwound::unwound(&mut a, w).map(|(_, damaged)| damaged)
        })
    };
    if let Err(e) = rewrite() {
        return Outcome::Fail(vec![format!("perfdata convert --unwind: {e}")]);
    }
    let converted = match perf_folded(&out, dir, &["--no-inline"]) {
        Ok(t) => parse_folded(&t),
        Err(why) => return Outcome::Fail(vec![format!("perf on the converted file: {why}")]),
    };
    let _ = std::fs::remove_file(&out);
    let reference = if task_32 {
        let rec = Recording::open(path);
        let folded = rec.map_err(|e| e.to_string()).and_then(|rec| {
            let mut a = Analyzer::open(&rec, &options(dir)).map_err(|e| e.to_string())?;
            let copts = collapse::CollapseOptions::default();
            collapse::collapse(&mut a, &copts).map_err(|e| e.to_string())
        });
        match folded {
            Ok(f) => f,
            Err(e) => return Outcome::Fail(vec![format!("our collapse: {e}")]),
        }
    } else {
        match perf_folded(path, dir, &["--no-inline"]) {
            Ok(t) => parse_folded(&t),
            Err(why) => return Outcome::Skip(why),
        }
    };
    compare_folded(
        &without_truncation(&reference),
        &without_truncation(&converted),
    )
}

/// The same stacks without their `[truncated]` frames.
fn without_truncation(f: &Folded) -> Folded {
    let mut out = Folded::new();
    for (stack, &w) in f {
        *out.entry(stack.replace(";[truncated]", "")).or_default() += w;
    }
    out
}

/// Check 10 on a 32-bit task, which perf 6.1 cannot unwind (its user stacks are empty):
/// the program's own call graph is the oracle. At least 99% of the weight of its samples
/// in `leaf` must sit under `_start;…;main;top;mid_a;leaf` or `…;mid_b;leaf`.
pub fn check_unwind_32(path: &Path, dir: &Path) -> Outcome {
    let ours = match (|| -> Result<Folded, String> {
        let rec = Recording::open(path).map_err(|e| e.to_string())?;
        let mut a = Analyzer::open(&rec, &options(dir)).map_err(|e| e.to_string())?;
        collapse::collapse(&mut a, &collapse::CollapseOptions::default()).map_err(|e| e.to_string())
    })() {
        Ok(f) => f,
        Err(e) => return Outcome::Fail(vec![format!("our collapse: {e}")]),
    };
    let in_leaf: Vec<(&String, u64)> = ours
        .iter()
        .filter(|(s, _)| s.ends_with(";leaf"))
        .map(|(s, &w)| (s, w))
        .collect();
    let total: u64 = in_leaf.iter().map(|(_, w)| w).sum();
    let whole = |s: &str| {
        s.contains(";_start;")
            && (s.ends_with(";main;top;mid_a;leaf") || s.ends_with(";main;top;mid_b;leaf"))
    };
    let good: u64 = in_leaf
        .iter()
        .filter(|(s, _)| whole(s))
        .map(|(_, w)| w)
        .sum();
    let share = pct(good, total);
    if total > 0 && share >= UNWIND_PASS {
        return Outcome::Pass(format!(
            "{share:.2}% of the weight in leaf under _start;…;main;top;mid_a|mid_b;leaf"
        ));
    }
    let mut why = vec![format!(
        "{share:.2}% of the weight in leaf ({good} of {total}) under _start;…;main;top;mid_a|mid_b;leaf; needs ≥ {UNWIND_PASS}%"
    )];
    why.extend(
        in_leaf
            .iter()
            .filter(|(s, _)| !whole(s))
            .take(SHOW_STACKS)
            .map(|(s, w)| format!("other: {s} {w}")),
    );
    Outcome::Fail(why)
}

/// Σ min(a, b) over the keys of `a`.
fn common<K: Ord>(a: &BTreeMap<K, u64>, b: &BTreeMap<K, u64>) -> u64 {
    a.iter()
        .map(|(k, &w)| w.min(b.get(k).copied().unwrap_or(0)))
        .sum()
}

fn pct(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}

/// Frames of a folded stack (the command name is not one).
fn depth(stack: &str) -> usize {
    stack.matches(';').count()
}

/// Weighted mean and maximum depth.
fn depths(f: &Folded) -> (f64, usize) {
    let total: u64 = f.values().sum();
    let sum: f64 = f.iter().map(|(s, &w)| depth(s) as f64 * w as f64).sum();
    let max = f.keys().map(|s| depth(s)).max().unwrap_or(0);
    (if total == 0 { 0.0 } else { sum / total as f64 }, max)
}

/// The largest excesses of `a` over `b` (weight `a` gives a stack beyond `b`'s).
fn excess<'f>(a: &'f Folded, b: &Folded) -> Vec<(&'f str, u64)> {
    let mut v: Vec<(&str, u64)> = a
        .iter()
        .filter_map(|(s, &w)| {
            let d = w.saturating_sub(b.get(s).copied().unwrap_or(0));
            (d > 0).then_some((s.as_str(), d))
        })
        .collect();
    v.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(y.0)));
    v
}

/// The last frame of a folded stack.
fn leaf(stack: &str) -> &str {
    stack.rsplit(';').next().unwrap_or(stack)
}

/// Check 10's comparison.
pub fn compare_folded(theirs: &Folded, ours: &Folded) -> Outcome {
    let total: u64 = theirs.values().sum();
    let ours_total: u64 = ours.values().sum();
    if total == 0 {
        return Outcome::Skip("perf script gave no stacks".into());
    }
    let mut theirs = theirs.clone();
    let cut = pct(cut_short::reconcile_folded(&mut theirs, ours), total);
    let theirs = &theirs;
    let cut_note = cut_short::note(cut);
    let agree = common(theirs, ours);
    let share = pct(agree, total);
    let leaves = |f: &Folded| {
        let mut m: BTreeMap<String, u64> = BTreeMap::new();
        for (s, &w) in f {
            let comm = s.split(';').next().unwrap_or("");
            *m.entry(format!("{comm};{}", leaf(s))).or_default() += w;
        }
        m
    };
    let leaf_share = pct(common(&leaves(theirs), &leaves(ours)), total);
    let (perf_mean, perf_max) = depths(theirs);
    let (our_mean, our_max) = depths(ours);
    let summary = format!(
        "{share:.2}% of perf's weight in identical folded stacks ({} of {total}; {} distinct stacks in perf's, {} in ours)",
        agree,
        theirs.len(),
        ours.len()
    );
    if share >= UNWIND_PASS && cut <= cut_short::CUT_SHORT_MAX {
        return Outcome::Pass(match cut_note {
            Some(n) => format!("{summary}; {n}"),
            None => summary,
        });
    }
    let mut lines = vec![
        format!("{summary}; needs ≥ {UNWIND_PASS}%"),
        format!(
            "same command and leaf frame: {leaf_share:.2}%; frames per stack (mean by weight / max): perf {perf_mean:.1} / {perf_max}, ours {our_mean:.1} / {our_max}; total weight perf {total}, ours {ours_total}"
        ),
    ];
    for (side, list, of) in [
        ("perf only", excess(theirs, ours), total),
        ("ours only", excess(ours, theirs), ours_total),
    ] {
        let n = list.len();
        for (s, w) in list.iter().take(SHOW_STACKS) {
            lines.push(format!("{side} {:.2}%: {}", pct(*w, of), show_stack(s)));
        }
        if n > SHOW_STACKS {
            let rest: u64 = list[SHOW_STACKS..].iter().map(|x| x.1).sum();
            lines.push(format!(
                "{side}: {} more stacks, {:.2}%",
                n - SHOW_STACKS,
                pct(rest, of)
            ));
        }
    }
    if let Some(n) = cut_note {
        lines.push(format!("{n}; at most {}% may be", cut_short::CUT_SHORT_MAX));
    }
    Outcome::Fail(lines)
}

// ---------------------------------------------------------------------------------------
// 11. call graph
// ---------------------------------------------------------------------------------------

/// `perfdata report --no-children -g folded,0,caller` as chains: per row, every chain
/// (root first, ending with the sampled function; an unresolved call as its address,
/// as perf prints it) and its share of the event's period, summed by name.
fn our_chains(path: &Path, dir: &Path) -> Result<ChainRows, String> {
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let mut a = Analyzer::open(&rec, &options(dir)).map_err(|e| e.to_string())?;
    let mut opts = report::ReportOptions::table(
        report::SortKey::parse("comm,dso,sym").map_err(|e| e.to_string())?,
    );
    opts.call_graph =
        report::CallGraphOptions::parse("folded,0,caller").map_err(|e| e.to_string())?;
    let reports = report::report(&mut a, &opts).map_err(|e| e.to_string())?;
    let mut rows = ChainRows::new();
    for r in reports {
        for row in r.rows {
            let [c, d, s] = <[String; 3]>::try_from(row.keys).map_err(|_| "3 keys")?;
            let mut chains: BTreeMap<String, u64> = BTreeMap::new();
            for chain in &row.call_graph {
                *chains.entry(chain.frames.join(";")).or_default() += chain.self_period;
            }
            let chains = chains
                .into_iter()
                .map(|(ch, p)| (ch, format!("{:.2}", pct(p, r.period))))
                .collect();
            rows.insert(
                (r.event.clone(), c, d, s),
                (row.samples, format!("{:.2}", row.percent), chains),
            );
        }
    }
    Ok(rows)
}

/// Check 11.
pub fn check_call_graph(path: &Path, dir: &Path) -> Outcome {
    let args = [
        "report",
        "--stdio",
        "-n",
        "--no-children",
        "--no-inline",
        "--percent-limit",
        "0",
        "-g",
        "folded,0,caller,function,percent",
        "--sort",
        "comm,dso,sym",
        "-i",
    ];
    let stdout = match perf_stdout(dir, &os_args(&args, path)) {
        Ok(o) => o,
        Err(why) => return Outcome::Skip(why),
    };
    let theirs = parse_perf_report_chains(&String::from_utf8_lossy(&stdout));
    let ours = match our_chains(path, dir) {
        Ok(r) => r,
        Err(e) => return Outcome::Fail(vec![format!("our report -g: {e}")]),
    };
    compare_chains(&theirs, &ours)
}

/// Percent text → hundredths of a percent.
fn hundredths(p: &str) -> Option<i64> {
    p.parse::<f64>().ok().map(|v| (v * 100.0).round() as i64)
}

/// Check 11's comparison: per row, every chain's share within 0.01%.
pub fn compare_chains(theirs: &ChainRows, ours: &ChainRows) -> Outcome {
    let empty = BTreeMap::new();
    // Chains perf's unwinder cut short, renamed to ours (in hundredths of a percent).
    let mut theirs = theirs.clone();
    let mut cut = 0i64;
    for (k, row) in theirs.iter_mut() {
        if let Some(o) = ours.get(k) {
            cut += cut_short::reconcile_chains(&mut row.2, &o.2);
        }
    }
    let theirs = &theirs;
    // (|perf − ours| in hundredths, message), for each chain that differs.
    let mut diffs: Vec<(i64, String)> = vec![];
    let (mut chains, mut rows_differ) = (0usize, 0usize);
    // Σ min(perf, ours) and Σ perf over every chain, in hundredths of a percent.
    let (mut agree, mut total) = (0i64, 0i64);
    let keys: std::collections::BTreeSet<_> = theirs.keys().chain(ours.keys()).collect();
    let rows = keys.len();
    for k in keys {
        let t = theirs.get(k).map_or(&empty, |r| &r.2);
        let o = ours.get(k).map_or(&empty, |r| &r.2);
        let names: std::collections::BTreeSet<&String> = t.keys().chain(o.keys()).collect();
        let mut differs = false;
        for ch in names {
            chains += 1;
            let tp = t.get(ch).and_then(|p| hundredths(p)).unwrap_or(0);
            let op = o.get(ch).and_then(|p| hundredths(p)).unwrap_or(0);
            agree += tp.min(op);
            total += tp;
            if (tp - op).abs() > 1 || t.contains_key(ch) != o.contains_key(ch) {
                differs = true;
                let side = |m: &BTreeMap<String, String>| {
                    m.get(ch).map_or("none".to_string(), |p| format!("{p}%"))
                };
                diffs.push((
                    (tp - op).abs(),
                    format!(
                        "{} {} {}: perf {}, ours {}: {}",
                        k.1,
                        k.2,
                        k.3,
                        side(t),
                        side(o),
                        show_stack(ch)
                    ),
                ));
            }
        }
        rows_differ += usize::from(differs);
    }
    let cut_pct = cut as f64 / 100.0;
    let cut_note = cut_short::note(cut_pct);
    if diffs.is_empty() && cut_pct <= cut_short::CUT_SHORT_MAX {
        return Outcome::Pass(match cut_note {
            Some(n) => format!("{chains} caller chains of {rows} rows agree to 0.01%; {n}"),
            None => format!("{chains} caller chains of {rows} rows agree to 0.01%"),
        });
    }
    let n = diffs.len();
    diffs.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut lines = vec![format!(
        "{n} of {chains} caller chains differ, in {rows_differ} of {rows} rows; {:.2}% of perf's chain weight agrees",
        if total == 0 {
            0.0
        } else {
            agree as f64 * 100.0 / total as f64
        }
    )];
    lines.extend(diffs.into_iter().take(2 * SHOW_STACKS).map(|d| d.1));
    if let Some(n) = cut_note {
        lines.push(format!("{n}; at most {}% may be", cut_short::CUT_SHORT_MAX));
    }
    Outcome::Fail(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_agreement_is_the_common_weight_over_perfs() {
        let theirs = parse_folded("p;main;a;leaf 60\np;main;b;leaf 40\n");
        let ours = parse_folded("p;main;a;leaf 60\np;leaf 40\n");
        match compare_folded(&theirs, &ours) {
            Outcome::Fail(lines) => {
                assert!(lines[0].starts_with("60.00% of perf's weight"), "{lines:?}");
                assert!(lines[1].contains("same command and leaf frame: 100.00%"));
                assert!(lines.iter().any(|l| l == "perf only 40.00%: p;main;b;leaf"));
                assert!(lines.iter().any(|l| l == "ours only 40.00%: p;leaf"));
            }
            o => panic!("{o:?}"),
        }
        let mut close = theirs.clone();
        *close.get_mut("p;main;b;leaf").unwrap() -= 1;
        close.insert("p;main;c;leaf".into(), 1);
        assert!(matches!(compare_folded(&theirs, &close), Outcome::Pass(_)));
    }

    #[test]
    fn chains_compare_to_a_hundredth() {
        let row = |chains: &[(&str, &str)]| {
            let mut m = ChainRows::new();
            m.insert(
                ("e".into(), "p".into(), "p".into(), "[.] leaf".into()),
                (
                    3,
                    "100.00".into(),
                    chains
                        .iter()
                        .map(|(c, p)| (c.to_string(), p.to_string()))
                        .collect(),
                ),
            );
            m
        };
        let perf = row(&[("main;a;leaf", "60.00"), ("main;b;leaf", "40.00")]);
        assert!(matches!(
            compare_chains(
                &perf,
                &row(&[("main;a;leaf", "60.01"), ("main;b;leaf", "39.99")])
            ),
            Outcome::Pass(_)
        ));
        match compare_chains(&perf, &row(&[("leaf", "100.00")])) {
            Outcome::Fail(lines) => {
                assert!(lines[0].starts_with("3 of 3 caller chains differ, in 1 of 1 rows; 0.00%"));
                assert!(
                    lines[1].contains("perf none, ours 100.00%: leaf"),
                    "{lines:?}"
                );
            }
            o => panic!("{o:?}"),
        }
    }
}
