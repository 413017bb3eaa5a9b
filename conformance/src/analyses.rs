//! Checks 7 and 8: our analyses against perf's and inferno's on the same file.
//! 7 (report): `perf report --stdio -n --no-children --no-group --sort comm,dso,sym -g
//! none`, every
//! row of every event (command, shared object, symbol, samples, overhead to 0.01%).
//! 8 (collapse): `perf script --no-inline | inferno-collapse-perf` (the inferno crate's
//! perf folder, the code of that binary) byte for byte against `perfdata collapse`.
//! 9 (duckdb): the Parquet export queried by the real DuckDB against `perfdata report`.

use crate::checks::{Outcome, SHOW};
use crate::record::perf;
use perfdata::Recording;
use perfdata_analysis::{collapse, report, Analyzer, SymbolOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Symbol sources as perf sees them in a conformance run (its build-id cache is
/// `dir/.buildid`, see `record::perf`).
fn options(dir: &Path) -> SymbolOptions {
    SymbolOptions {
        build_id_dir: Some(dir.join(".buildid")),
        ..SymbolOptions::default()
    }
}

/// One row of perf's table: (event, command, dso, symbol) → (samples, "12.34").
type Rows = BTreeMap<(String, String, String, String), (u64, String)>;

/// Parses `perf report --stdio -n --sort comm,dso,sym` text (columns located by the
/// dotted line under the header).
pub fn parse_perf_report(text: &str) -> Rows {
    let mut rows = Rows::new();
    let mut event = String::new();
    let mut spans: Vec<(usize, usize)> = vec![];
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# Samples: ") {
            // "of event 'x'", or with --no-group "of events 'x'".
            if let Some(i) = rest.find("of event") {
                event = rest[i..]
                    .split_once('\'')
                    .map_or("", |(_, e)| e)
                    .trim_end_matches('\'')
                    .to_string();
            }
            spans.clear();
            continue;
        }
        if line.starts_with("# ..") {
            spans.clear();
            let b = line.as_bytes();
            let mut i = 2;
            while i < b.len() {
                if b[i] == b'.' {
                    let start = i;
                    while i < b.len() && b[i] == b'.' {
                        i += 1;
                    }
                    spans.push((start, i));
                } else {
                    i += 1;
                }
            }
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() || spans.len() != 5 {
            continue;
        }
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
        let pct = col(0).trim_end_matches('%').to_string();
        let Ok(samples) = col(1).parse::<u64>() else {
            continue;
        };
        rows.insert((event.clone(), col(2), col(3), col(4)), (samples, pct));
    }
    rows
}

/// Check 7.
pub fn check_report(path: &Path, dir: &Path) -> Outcome {
    let out = match perf(dir)
        .args([
            "report",
            "--stdio",
            "-n",
            "--no-children",
            "--no-group",
            "--sort",
            "comm,dso,sym",
        ])
        .args(["-g", "none", "--percent-limit", "0", "-i"])
        .arg(path)
        .output()
    {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            return Outcome::Skip(format!(
                "perf report failed: {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            ))
        }
        Err(e) => return Outcome::Skip(format!("perf report: {e}")),
    };
    let theirs = parse_perf_report(&String::from_utf8_lossy(&out.stdout));
    let ours = match our_report(path, dir) {
        Ok(r) => r,
        Err(e) => return Outcome::Fail(vec![format!("our report: {e}")]),
    };
    compare_rows(&theirs, &ours)
}

fn our_report(path: &Path, dir: &Path) -> Result<Rows, String> {
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let mut a = Analyzer::open(&rec, &options(dir)).map_err(|e| e.to_string())?;
    let reports =
        report::report(&mut a, &report::ReportOptions::default()).map_err(|e| e.to_string())?;
    let mut rows = Rows::new();
    for r in reports {
        for row in r.rows {
            let [c, d, s] = <[String; 3]>::try_from(row.keys).map_err(|_| "3 keys")?;
            rows.insert(
                (r.event.clone(), c, d, s),
                (row.samples, format!("{:.2}", row.percent)),
            );
        }
    }
    Ok(rows)
}

fn compare_rows(theirs: &Rows, ours: &Rows) -> Outcome {
    let mut diffs = vec![];
    for (k, v) in theirs {
        match ours.get(k) {
            Some(o) if o == v => {}
            Some(o) => diffs.push(format!(
                "{k:?}: perf {} samples {}%, ours {} {}%",
                v.0, v.1, o.0, o.1
            )),
            None => diffs.push(format!("{k:?}: perf {} samples {}%, ours none", v.0, v.1)),
        }
    }
    for (k, o) in ours {
        if !theirs.contains_key(k) {
            diffs.push(format!("{k:?}: ours {} samples {}%, perf none", o.0, o.1));
        }
    }
    if diffs.is_empty() {
        let events: std::collections::BTreeSet<_> = theirs.keys().map(|k| &k.0).collect();
        Outcome::Pass(format!(
            "{} rows of {} events equal",
            theirs.len(),
            events.len()
        ))
    } else {
        let n = diffs.len();
        let mut v: Vec<String> = diffs.into_iter().take(SHOW).collect();
        v.push(format!(
            "{n} rows differ of {} (perf) / {} (ours)",
            theirs.len(),
            ours.len()
        ));
        Outcome::Fail(v)
    }
}

/// `perf script ARGS -i FILE` folded by inferno (the code of `inferno-collapse-perf`):
/// the folded text, or why there is none (a skip reason).
pub fn perf_folded(path: &Path, dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = match perf(dir)
        .arg("script")
        .args(args)
        .arg("-i")
        .arg(path)
        .output()
    {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            return Err(format!(
                "perf script failed: {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            ))
        }
        Err(e) => return Err(format!("perf script: {e}")),
    };
    use inferno::collapse::Collapse;
    let mut folded = vec![];
    let mut folder =
        inferno::collapse::perf::Folder::from(inferno::collapse::perf::Options::default());
    if let Err(e) = folder.collapse(&out.stdout[..], &mut folded) {
        return Err(format!("inferno: {e}"));
    }
    Ok(String::from_utf8_lossy(&folded).into_owned())
}

/// Check 8. `perf script --no-inline`: `perfdata collapse` without `--inline` adds no
/// inline frames (perf script 6.1 adds them by default, where DWARF describes them).
pub fn check_collapse(path: &Path, dir: &Path) -> Outcome {
    let theirs = match perf_folded(path, dir, &["--no-inline"]) {
        Ok(t) => t,
        Err(why) => return Outcome::Skip(why),
    };
    let ours = match (|| -> Result<String, String> {
        let rec = Recording::open(path).map_err(|e| e.to_string())?;
        let mut a = Analyzer::open(&rec, &options(dir)).map_err(|e| e.to_string())?;
        let f = collapse::collapse(&mut a, &collapse::CollapseOptions::default())
            .map_err(|e| e.to_string())?;
        let mut v = vec![];
        collapse::write_folded(&mut v, &f).map_err(|e| e.to_string())?;
        Ok(String::from_utf8_lossy(&v).into_owned())
    })() {
        Ok(s) => s,
        Err(e) => return Outcome::Fail(vec![format!("our collapse: {e}")]),
    };
    if theirs == ours {
        return Outcome::Pass(format!(
            "{} folded stacks byte-identical",
            ours.lines().count()
        ));
    }
    let t: std::collections::BTreeSet<&str> = theirs.lines().collect();
    let o: std::collections::BTreeSet<&str> = ours.lines().collect();
    let mut v: Vec<String> = t
        .difference(&o)
        .map(|l| format!("inferno only: {l}"))
        .chain(o.difference(&t).map(|l| format!("ours only: {l}")))
        .take(SHOW)
        .collect();
    v.push(format!("{} lines (inferno) / {} (ours)", t.len(), o.len()));
    Outcome::Fail(v)
}

/// Check 9 (all scenarios at once, one Python start): every recording exported to Parquet
/// with `--symbolize`, and DuckDB's per-function totals over the export equal to
/// `perfdata report --sort dso,sym` on the same file, row by row. One outcome per input.
pub fn check_duckdb(files: &[PathBuf], work: &Path) -> Vec<Outcome> {
    use perfdata_analysis::parquet::{export_recording, ExportOptions};
    let out = work.join("parquet-export");
    let _ = std::fs::remove_dir_all(&out);
    let opts = ExportOptions {
        symbolize: true,
        symbols: options(work),
        ..ExportOptions::default()
    };
    let mut exported = vec![];
    for (i, f) in files.iter().enumerate() {
        exported.push(export_recording(f, i as u32, &out, &opts).map_err(|e| e.to_string()));
    }
    let script = format!(
        r#"
import duckdb
q = """
SELECT s.recording, s.event,
       coalesce(regexp_extract(f.dso, '[^/]*$'), '[unknown]') AS dso,
       coalesce(f.function, printf('0x%016x', coalesce(f.dso_offset, f.address))) AS function,
       count(*) AS samples, sum(s.period) AS period
FROM read_parquet('{dir}/samples/*/*.parquet', hive_partitioning = true) s
JOIN read_parquet('{dir}/frames/*/*.parquet', hive_partitioning = true) f
  ON f.recording = s.recording AND f.frame_id = s.leaf_frame
GROUP BY ALL ORDER BY ALL
"""
for r in duckdb.sql(q).fetchall():
    print("\t".join(str(x) for x in r))
"#,
        dir = out.display()
    );
    let run = std::process::Command::new("python3")
        .arg("-c")
        .arg(&script)
        .output();
    let text = match run {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let why = if err.contains("No module named 'duckdb'") {
                "the duckdb Python package is missing (pip install duckdb)".to_string()
            } else {
                format!("duckdb failed: {}", err.lines().last().unwrap_or(""))
            };
            return files.iter().map(|_| Outcome::Skip(why.clone())).collect();
        }
        Err(e) => {
            return files
                .iter()
                .map(|_| Outcome::Skip(format!("python3: {e}")))
                .collect()
        }
    };
    // (recording) → (event, dso, function) → (samples, period)
    type Totals = BTreeMap<(String, String, String), (u64, u64)>;
    let mut theirs: BTreeMap<u32, Totals> = BTreeMap::new();
    for line in text.lines() {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() != 6 {
            continue;
        }
        let (Ok(rec), Ok(n), Ok(p)) = (c[0].parse::<u32>(), c[4].parse(), c[5].parse()) else {
            continue;
        };
        theirs
            .entry(rec)
            .or_default()
            .insert((c[1].into(), c[2].into(), c[3].into()), (n, p));
    }
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if let Err(e) = &exported[i] {
                return Outcome::Fail(vec![format!("export: {e}")]);
            }
            let ours = match (|| -> Result<Totals, String> {
                let rec = Recording::open(f).map_err(|e| e.to_string())?;
                let mut a = Analyzer::open(&rec, &options(work)).map_err(|e| e.to_string())?;
                let sort = report::SortKey::parse("dso,sym")?;
                let reports = report::report(
                    &mut a,
                    &report::ReportOptions {
                        sort,
                        callers: false,
                    },
                )
                .map_err(|e| e.to_string())?;
                let mut t = Totals::new();
                for r in reports {
                    for row in r.rows {
                        let sym = row.keys[1].get(4..).unwrap_or("").to_string();
                        let e = t
                            .entry((r.event.clone(), row.keys[0].clone(), sym))
                            .or_default();
                        e.0 += row.samples;
                        e.1 += row.period;
                    }
                }
                Ok(t)
            })() {
                Ok(t) => t,
                Err(e) => return Outcome::Fail(vec![format!("our report: {e}")]),
            };
            let theirs = theirs.remove(&(i as u32)).unwrap_or_default();
            if ours == theirs {
                return Outcome::Pass(format!(
                    "{} (event, dso, function) totals equal",
                    ours.len()
                ));
            }
            let mut v: Vec<String> = theirs
                .iter()
                .filter(|(k, x)| ours.get(*k) != Some(x))
                .map(|(k, x)| format!("duckdb {k:?} = {x:?}, report {:?}", ours.get(k)))
                .chain(
                    ours.iter()
                        .filter(|(k, _)| !theirs.contains_key(*k))
                        .map(|(k, x)| format!("report only {k:?} = {x:?}")),
                )
                .take(SHOW)
                .collect();
            v.push(format!(
                "{} rows (duckdb) / {} (report)",
                theirs.len(),
                ours.len()
            ));
            Outcome::Fail(v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_perf_report_columns() {
        let text = concat!(
            "# Samples: 13  of event 'cpu-clock'\n",
            "# Event count (approx.): 26052104\n",
            "#\n",
            "# Overhead       Samples  Command  Shared Object     Symbol                         \n",
            "# ........  ............  .......  ................  ...............................\n",
            "#\n",
            "    15.38%             2  sh       libc.so.6         [.] __strcmp_evex\n",
            "     7.69%             1  sh       dash              [.] 0x00000000000054a7\n",
        );
        let rows = super::parse_perf_report(text);
        assert_eq!(rows.len(), 2);
        let k = (
            "cpu-clock".to_string(),
            "sh".to_string(),
            "libc.so.6".to_string(),
            "[.] __strcmp_evex".to_string(),
        );
        assert_eq!(rows[&k], (2, "15.38".to_string()));
    }
}
