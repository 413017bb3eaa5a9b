//! Check 13 (filters): perf's sample filters, given alike to perf and to perfdata.
//!
//! The values come from the recording itself (perfdata's unfiltered report: its top
//! command, a second command, its top process, thread, shared object and function; the
//! first sample's CPU; a percentage slice and an absolute window of the sample times), so
//! every filter selects something. For each:
//! * `perf report --stdio -n --no-children --no-group -g none --sort comm,dso,sym FILTER`
//!   against `perfdata report FILTER`'s text, both parsed alike: every row (samples,
//!   overhead to 0.01%), the `# Samples`/`# Event count` lines (perf counts the samples
//!   a thread, object or symbol filter hides in the totals) and the `# comm: x` lines of
//!   elided columns;
//! * `perf script --no-inline FILTER` folded by inferno against `perfdata collapse
//!   FILTER`, stack for stack — where the unfiltered foldings agree (check 8), so that
//!   this check tests the filter, not check 8 again.

use crate::analyses::{options, os_args, parse_folded, perf_folded, perf_stdout};
use crate::checks::Outcome;
use perfdata::Recording;
use perfdata_analysis::analyses::collapse;
use perfdata_analysis::analyses::report::{self, ReportOptions, SortKey};
use perfdata_analysis::filter::{SampleFilter, TimeSpec};
use perfdata_analysis::Analyzer;
use std::collections::BTreeMap;
use std::path::Path;

/// One filter: perf's arguments and the same as perfdata's [`SampleFilter`].
pub(crate) struct Case {
    pub(crate) args: Vec<String>,
    pub(crate) filter: SampleFilter,
    /// The report's sort keys: they include the filtered thread key, because perf's
    /// thread filters leak otherwise (below).
    pub(crate) sort: &'static str,
}

/// Check 13.
pub fn check_filters(path: &Path, dir: &Path) -> Outcome {
    let (cases, not_given) = match cases(path, dir) {
        Ok((c, _)) if c.is_empty() => return Outcome::Skip("no samples to filter".into()),
        Ok(c) => c,
        Err(e) => return Outcome::Fail(vec![format!("choosing the filters: {e}")]),
    };
    let collapse_too = match unfiltered_foldings_agree(path, dir) {
        Ok(b) => b,
        Err(why) => return Outcome::Skip(why),
    };
    let mut failures = vec![];
    let mut passed = vec![];
    // Rows parsed from perf's reports: none at all would be a parse that sees nothing.
    let mut rows_seen = 0;
    for c in &cases {
        let name = c.args.join(" ");
        let mut lines = vec![];
        match compare_report(path, dir, c, &mut rows_seen) {
            Ok(None) => {}
            Ok(Some(why)) => lines.extend(why),
            Err(e) => lines.push(e),
        }
        if collapse_too {
            match compare_collapse(path, dir, c) {
                Ok(None) => {}
                Ok(Some(why)) => lines.extend(why),
                Err(e) => lines.push(e),
            }
        }
        if lines.is_empty() {
            passed.push(name);
        } else {
            failures.extend(lines.into_iter().map(|l| format!("{name}: {l}")));
        }
    }
    if rows_seen == 0 {
        failures.push("no row parsed from any of perf's filtered reports".into());
    }
    if failures.is_empty() {
        Outcome::Pass(format!(
            "{} filters agree ({}): {}{}",
            passed.len(),
            if collapse_too {
                "report and collapse"
            } else {
                "report; collapse differs unfiltered, see check 8"
            },
            passed.join("; "),
            not_given
                .iter()
                .map(|n| format!("; not given: {n}"))
                .collect::<String>()
        ))
    } else {
        Outcome::Fail(failures)
    }
}

/// The filters, with values from the recording, and the filters not given (why).
pub(crate) fn cases(path: &Path, dir: &Path) -> Result<(Vec<Case>, Vec<String>), String> {
    let mut not_given = vec![];
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let mut a = Analyzer::open(&rec, &options(dir)).map_err(|e| e.to_string())?;
    let opts = ReportOptions {
        sort: vec![
            SortKey::Comm,
            SortKey::Pid,
            SortKey::Tid,
            SortKey::Dso,
            SortKey::Sym,
        ],
        ..ReportOptions::table(Vec::new())
    };
    let reports = report::report(&mut a, &opts).map_err(|e| e.to_string())?;
    let Some(top) = reports.first().and_then(|r| r.rows.first()) else {
        return Ok((vec![], not_given));
    };
    let key = |i: usize| top.keys[i].clone();
    let mut cases = vec![];
    let mut add = |args: Vec<String>, filter: SampleFilter| {
        // perf decides whether a row is hidden by the first sample that made it and
        // then adds every later sample of the same sort keys, hidden or not
        // (hist.c `hists__findnew_entry`): with `--pid` and rows by comm,dso,sym, two
        // processes of one name leak into each other's rows (two `yes` processes:
        // `--pid A` shows A's and B's do_syscall_64 samples summed). Rows keyed by the
        // filtered id keep every row to one thread or process, where perf is right.
        // (perf's `pid` key is the thread; perf 6.1 has no `tid` key.)
        let sort = match args[0].as_str() {
            "--pid" | "--tid" => "pid,comm,dso,sym",
            _ => "comm,dso,sym",
        };
        cases.push(Case { args, filter, sort })
    };
    let comm = key(0);
    add(
        vec!["--comms".into(), comm.clone()],
        SampleFilter {
            comms: Some(vec![comm.clone()]),
            ..SampleFilter::default()
        },
    );
    // A second command: two names keep the column (no elision).
    if let Some(other) = reports[0]
        .rows
        .iter()
        .map(|r| &r.keys[0])
        .find(|c| **c != comm)
    {
        add(
            vec!["--comms".into(), format!("{comm},{other}")],
            SampleFilter {
                comms: Some(vec![comm.clone(), other.clone()]),
                ..SampleFilter::default()
            },
        );
    }
    // `  1234:comm` and `1234`.
    if let Some(pid) = key(1).trim().split(':').next().and_then(|p| p.parse().ok()) {
        add(
            vec!["--pid".into(), format!("{pid}")],
            SampleFilter {
                pids: Some(vec![pid]),
                ..SampleFilter::default()
            },
        );
    }
    if let Ok(tid) = key(2).trim().parse::<i32>() {
        add(
            vec!["--tid".into(), format!("{tid}")],
            SampleFilter {
                tids: Some(vec![tid]),
                ..SampleFilter::default()
            },
        );
    }
    let dso = key(3);
    if dso != "[unknown]" {
        add(
            vec!["--dsos".into(), dso.clone()],
            SampleFilter {
                dsos: Some(vec![dso]),
                ..SampleFilter::default()
            },
        );
    }
    // `[.] name`; an unresolved address names no symbol.
    let sym = key(4).get(4..).unwrap_or_default().to_string();
    if !sym.is_empty() && !sym.starts_with("0x") && !sym.contains(',') {
        add(
            vec!["--symbols".into(), sym.clone()],
            SampleFilter {
                symbols: Some(vec![sym]),
                ..SampleFilter::default()
            },
        );
    }
    let (first_cpu, span, has_span_feature) = sample_facts(&rec, &mut a)?;
    let pipe = rec.data().map_err(|e| e.to_string())?.format.layout == perfdata::Layout::Pipe;
    if pipe && first_cpu.is_some() {
        // perf 6.1 checks the CPU list against the CPU count before a pipe's
        // HEADER_NRCPUS has arrived: "Requested CPU 0 too large".
        not_given.push("--cpu (perf 6.1 refuses it on a pipe: Requested CPU too large)".into());
    } else if let Some(cpu) = first_cpu {
        add(
            vec!["--cpu".into(), format!("{cpu}")],
            SampleFilter {
                cpus: Some(vec![cpu]),
                ..SampleFilter::default()
            },
        );
    }
    if let Some((first, last)) = span {
        // perf takes percentages from the SAMPLE_TIME feature only.
        if has_span_feature {
            for t in ["10%/2", "0%-30%,60%-90%"] {
                add(
                    vec!["--time".into(), t.into()],
                    SampleFilter {
                        time: Some(TimeSpec::parse(t, false).map_err(|e| e.to_string())?),
                        ..SampleFilter::default()
                    },
                );
            }
        }
        let t = middle_window(first, last);
        add(
            vec!["--time".into(), t.clone()],
            SampleFilter {
                time: Some(TimeSpec::parse(&t, false).map_err(|e| e.to_string())?),
                ..SampleFilter::default()
            },
        );
    }
    Ok((cases, not_given))
}

/// The middle half of a sample time span, as `--time start,stop` in seconds.
pub(crate) fn middle_window(first: u64, last: u64) -> String {
    let q = (last - first) / 4;
    let secs = |t: u64| format!("{}.{:09}", t / 1_000_000_000, t % 1_000_000_000);
    format!("{},{}", secs(first + q), secs(last - q))
}

/// The first sample's CPU (when every event samples it), the first and last sample
/// times, and whether the recording states them (HEADER_SAMPLE_TIME).
pub(crate) type SampleFacts = (Option<u32>, Option<(u64, u64)>, bool);

pub(crate) fn sample_facts(rec: &Recording, a: &mut Analyzer<'_>) -> Result<SampleFacts, String> {
    let data = rec.data().map_err(|e| e.to_string())?;
    let all_cpu = data.session.attrs.iter().all(|x| {
        x.attr
            .sample_type
            .contains(perfdata::types::SampleType::CPU)
    });
    let has_feature = data.features.iter().any(|f| {
        matches!(data.feature(f), Ok(perfdata::types::FeatureBody::SampleTime(t))
            if t.first_sample_time != 0)
    });
    let (mut cpu, mut span) = (None, None::<(u64, u64)>);
    a.run(
        Default::default(),
        |_, item| -> Result<bool, perfdata_analysis::AnalysisError> {
            if let Some(s) = &item.sample {
                if cpu.is_none() {
                    cpu = s.cpu;
                }
                if let Some(t) = s.time {
                    let (lo, hi) = span.get_or_insert((t, t));
                    *lo = (*lo).min(t);
                    *hi = (*hi).max(t);
                }
            }
            Ok(true)
        },
    )
    .map_err(|e| e.to_string())?;
    Ok((cpu.filter(|_| all_cpu), span, has_feature))
}

/// `None` when the report agrees, else what differs.
fn compare_report(
    path: &Path,
    dir: &Path,
    c: &Case,
    rows_seen: &mut usize,
) -> Result<Option<Vec<String>>, String> {
    let mut args: Vec<&str> = vec![
        "report",
        "--stdio",
        "-n",
        "--no-children",
        "--no-group",
        "-g",
        "none",
        "--sort",
        c.sort,
    ];
    args.extend(c.args.iter().map(String::as_str));
    args.push("-i");
    let theirs = String::from_utf8_lossy(&perf_stdout(dir, &os_args(&args, path))?).into_owned();
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let mut o = options(dir);
    o.filter = c.filter.clone();
    let mut a = Analyzer::open(&rec, &o).map_err(|e| format!("our report: {e}"))?;
    let sort = SortKey::parse(c.sort).map_err(|e| e.to_string())?;
    let opts = ReportOptions {
        elide: report::elided(&c.filter, &sort),
        sort,
        time: c
            .args
            .iter()
            .position(|x| x == "--time")
            .map(|i| c.args[i + 1].clone()),
        ..ReportOptions::table(Vec::new())
    };
    let reports = report::report(&mut a, &opts).map_err(|e| format!("our report: {e}"))?;
    let ours = report::render(&reports, &opts);
    let mut why = vec![];
    let totals = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| {
                [
                    "# Samples:",
                    "# Event count",
                    "# comm:",
                    "# dso:",
                    "# symbol:",
                ]
                .iter()
                .any(|p| l.starts_with(p))
            })
            // `--no-group` makes perf say "of events"; check 7 reads both alike.
            .map(|l| l.replace("of events '", "of event '"))
            .collect()
    };
    let (tt, ot) = (totals(&theirs), totals(&ours));
    if tt != ot {
        why.push(format!("perf's totals {tt:?}, ours {ot:?}"));
    }
    let (tr, or) = (parse_rows(&theirs), parse_rows(&ours));
    *rows_seen += tr.len();
    for (k, v) in &tr {
        if or.get(k) != Some(v) {
            why.push(format!("{k:?}: perf {v:?}, ours {:?}", or.get(k)));
        }
    }
    for (k, v) in &or {
        if !tr.contains_key(k) {
            why.push(format!("{k:?}: ours {v:?}, perf none"));
        }
    }
    why.truncate(6);
    Ok((!why.is_empty()).then_some(why))
}

/// A report's rows, whatever its columns: (event, the key columns) → (samples,
/// overhead text). Columns are located by the dotted line under the header.
type KeyedRows = BTreeMap<(String, Vec<String>), (u64, String)>;

fn parse_rows(text: &str) -> KeyedRows {
    let mut rows = KeyedRows::new();
    let (mut event, mut spans) = (String::new(), Vec::<(usize, usize)>::new());
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# Samples: ") {
            event = rest.replace("of events '", "of event '");
            event = event
                .split_once("of event '")
                .map_or("", |x| x.1)
                .to_string();
            spans.clear();
        } else if line.starts_with("# ..") {
            spans = crate::analyses::dotted_spans(line);
        } else if !line.starts_with('#') && spans.len() >= 3 {
            let col = |k: usize| -> String {
                let (s, e) = spans[k];
                let e = if k + 1 == spans.len() {
                    line.len()
                } else {
                    e.min(line.len())
                };
                line.get(s.min(line.len())..e)
                    .unwrap_or("")
                    .trim()
                    .to_string()
            };
            let Ok(samples) = col(1).parse::<u64>() else {
                continue;
            };
            let keys = (2..spans.len()).map(col).collect();
            rows.insert((event.clone(), keys), (samples, col(0)));
        }
    }
    rows
}

/// `None` when the folded stacks agree, else what differs.
fn compare_collapse(path: &Path, dir: &Path, c: &Case) -> Result<Option<Vec<String>>, String> {
    let mut args: Vec<&str> = vec!["--no-inline"];
    args.extend(c.args.iter().map(String::as_str));
    let theirs = parse_folded(&perf_folded(path, dir, &args)?);
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let mut o = options(dir);
    o.filter = c.filter.clone();
    let mut a = Analyzer::open(&rec, &o).map_err(|e| format!("our collapse: {e}"))?;
    let ours = collapse::collapse(&mut a, &collapse::CollapseOptions::default())
        .map_err(|e| format!("our collapse: {e}"))?;
    if theirs == ours {
        return Ok(None);
    }
    let differ: Vec<String> = theirs
        .iter()
        .filter(|(s, w)| ours.get(*s) != Some(*w))
        .map(|(s, w)| format!("collapse: perf {s} {w}, ours {:?}", ours.get(s)))
        .chain(
            ours.iter()
                .filter(|(s, _)| !theirs.contains_key(*s))
                .map(|(s, w)| format!("collapse: ours only {s} {w}")),
        )
        .take(4)
        .collect();
    Ok(Some(differ))
}

/// Whether perf's and perfdata's unfiltered foldings are equal (check 8's question);
/// `Err`: perf gave none (a skip reason).
fn unfiltered_foldings_agree(path: &Path, dir: &Path) -> Result<bool, String> {
    let theirs = parse_folded(&perf_folded(path, dir, &["--no-inline"])?);
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let ours = Analyzer::open(&rec, &options(dir))
        .and_then(|mut a| collapse::collapse(&mut a, &collapse::CollapseOptions::default()))
        .map_err(|e| e.to_string())?;
    Ok(theirs == ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_whatever_the_columns() {
        let text =
            "# comm: yes\n#\n# Samples: 9  of events 'cpu-clock'\n# Event count (approx.): 9\n#\n\
            # Overhead       Samples  Shared Object      Symbol\n\
            # ........  ............  .................  ..................\n#\n\
            \x20   55.56%             5  [kernel.kallsyms]  [k] do_syscall_64\n\
            \x20   44.44%             4  libc.so.6          [.] __GI___libc_write\n";
        let rows = parse_rows(text);
        assert_eq!(rows.len(), 2);
        let k = (
            "cpu-clock'".to_string(),
            vec![
                "[kernel.kallsyms]".to_string(),
                "[k] do_syscall_64".to_string(),
            ],
        );
        assert_eq!(rows[&k], (5, "55.56%".to_string()));
    }
}
