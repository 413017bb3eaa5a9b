//! Check 9 (sql): every recorded scenario exported to Parquet (`--symbolize`) and every
//! documented query of `docs/queries/ENGINE/` run as written in DuckDB, Spark
//! (`local[2]`) and DataFusion (`engines/run_queries.py`), its numbers against perfdata's
//! own, recording by recording:
//!
//! | query | reference |
//! |---|---|
//! | top_functions | `report --sort dso,sym`: samples, period, percent (±0.01) |
//! | top_functions_all | the same summed over the recordings |
//! | dsos | `report --sort dso` |
//! | time_per_thread | `report --sort tid` |
//! | time_per_process | `report --pid P --percentage relative`'s totals, for the five largest processes |
//! | folded | `collapse --event E`, line for line |
//! | histogram | `report --time START,END` (the bucket's window)'s totals, for the first, middle and last bucket |
//! | addresses | every sampled address, printed as `0x%016x` (Spark reads uint64 as decimals) |
//! | syscalls | `perf script`'s raw_syscalls lines paired as the query pairs them: per process and call, count, total and max latency |
//! | wakeup_latency | `perf script`'s sched_wakeup and sched_switch lines, paired alike: per thread, count, total and max |
//! | fd_bytes | `perf script`'s sys_enter/exit_read and _write lines, paired alike: per process and fd, calls, bytes, failures |
//!
//! An engine whose Python package (or Java, for Spark) is missing is skipped with that
//! reason; a query that fails as written fails every row.

use crate::analyses::options;
use crate::checks::{Outcome, SHOW};
use crate::trace_queries::{self, TraceLine};
use perfdata::Recording;
use perfdata_analysis::analyses::collapse;
use perfdata_analysis::analyses::report::{self, ReportOptions, SortKey};
use perfdata_analysis::export::parquet::{self, ExportOptions};
use perfdata_analysis::filter::{SampleFilter, TimeSpec};
use perfdata_analysis::AnalysisError;
use perfdata_analysis::Analyzer;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The engines, as `run_queries.py` names them.
const ENGINES: [&str; 3] = ["duckdb", "spark", "datafusion"];

/// One query's result: column name → index, and the rows.
pub(crate) struct Table {
    pub(crate) cols: Vec<String>,
    pub(crate) rows: Vec<Vec<Value>>,
}

impl Table {
    pub(crate) fn col(&self, row: &[Value], name: &str) -> Value {
        self.cols
            .iter()
            .position(|c| c == name)
            .and_then(|i| row.get(i).cloned())
            .unwrap_or(Value::Null)
    }
}

/// Check 9, for every exported recording at once (one engine start each): one outcome
/// per file.
pub fn check_sql(files: &[PathBuf], work: &Path, workspace: &Path) -> Vec<Outcome> {
    let out = work.join("parquet-export");
    let _ = std::fs::remove_dir_all(&out);
    let opts = ExportOptions {
        symbolize: true,
        ..ExportOptions::default()
    };
    let symbols = opts.analyzer_options(&options(work));
    let mut exported = vec![];
    for (i, f) in files.iter().enumerate() {
        let one = || -> Result<_, AnalysisError> {
            let recording = Recording::open(f)?;
            let mut a = Analyzer::open(&recording, &symbols)?;
            parquet::export(&mut a, i as u32, &opts, &mut parquet::Directory::new(&out))
        };
        exported.push(one().map_err(|e| e.to_string()));
    }
    // engine → query → result, or why the engine was not run.
    let mut results: BTreeMap<&str, Result<Results, String>> = BTreeMap::new();
    for engine in ENGINES {
        let t = std::time::Instant::now();
        results.insert(engine, run_engine(engine, &out, workspace));
        eprintln!("    {engine:<20} {:>6} ms", t.elapsed().as_millis());
    }
    let skipped: Vec<String> = results
        .iter()
        .filter_map(|(e, r)| r.as_ref().err().map(|why| format!("{e}: {why}")))
        .collect();
    if skipped.len() == ENGINES.len() {
        let why = skipped.join("; ");
        return files.iter().map(|_| Outcome::Skip(why.clone())).collect();
    }
    let all = all_recordings_reference(files, work);
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if let Err(e) = &exported[i] {
                return Outcome::Fail(vec![format!("export: {e}")]);
            }
            let reference = match Reference::of(f, work) {
                Ok(r) => r,
                Err(e) => return Outcome::Fail(vec![format!("our reference: {e}")]),
            };
            // perf script's tracepoint lines, read once for the tracepoint queries.
            let perf_trace = std::cell::OnceCell::new();
            let trace = || perf_trace.get_or_init(|| trace_queries::perf_trace(f, work));
            let against_perf =
                |check: fn(&Table, u32, &[TraceLine]) -> Vec<String>, t| match trace() {
                    Ok(lines) => check(t, i as u32, lines),
                    Err(e) => vec![e.clone()],
                };
            let mut fails = vec![];
            let mut checked = 0;
            for (engine, r) in &results {
                let Ok(queries) = r else { continue };
                for (name, t) in queries {
                    match t {
                        Err(e) => fails.push(format!("{engine} {name}: fails as written: {e}")),
                        Ok(t) => {
                            checked += 1;
                            let why = match name.as_str() {
                                "top_functions" => reference.functions(t, i as u32),
                                "top_functions_all" => match &all {
                                    Ok(all) => compare_all(all, t),
                                    Err(e) => vec![format!("reference: {e}")],
                                },
                                "dsos" => reference.dsos(t, i as u32),
                                "time_per_thread" => reference.threads(t, i as u32),
                                "time_per_process" => reference.processes(t, i as u32, f, work),
                                "folded" => reference.folded(t, i as u32),
                                "histogram" => reference.histogram(t, i as u32, f, work),
                                "addresses" => reference.addresses(t, i as u32),
                                "syscalls" => against_perf(trace_queries::check_syscalls, t),
                                "wakeup_latency" => against_perf(trace_queries::check_wakeups, t),
                                "fd_bytes" => against_perf(trace_queries::check_fd_bytes, t),
                                other => vec![format!("no reference for query {other}")],
                            };
                            fails.extend(why.into_iter().map(|w| format!("{engine} {name}: {w}")));
                        }
                    }
                }
            }
            if fails.is_empty() {
                let mut msg = format!("{checked} query results equal perfdata's");
                if !skipped.is_empty() {
                    msg.push_str(&format!(" (skipped: {})", skipped.join("; ")));
                }
                Outcome::Pass(msg)
            } else {
                let n = fails.len();
                fails.truncate(SHOW);
                if n > SHOW {
                    fails.push(format!("{} more", n - SHOW));
                }
                Outcome::Fail(fails)
            }
        })
        .collect()
}

type Results = BTreeMap<String, Result<Table, String>>;

/// Runs one engine's queries; `Err`: the engine is not installed (a skip reason).
fn run_engine(engine: &str, profiles: &Path, workspace: &Path) -> Result<Results, String> {
    if engine == "spark" && which("java").is_none() {
        return Err("java is missing (Debian: default-jre-headless)".into());
    }
    let out = std::process::Command::new("python3")
        .arg(workspace.join("conformance/engines/run_queries.py"))
        .arg(engine)
        .arg(profiles)
        .arg(workspace.join("docs/queries"))
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named") {
        let line = stderr.lines().rfind(|l| l.contains("No module named"));
        return Err(format!(
            "{} (pip install duckdb pyspark datafusion pyarrow)",
            line.unwrap_or("").trim()
        ));
    }
    let json: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "{engine} printed no result ({e}): {}",
            stderr.lines().last().unwrap_or("")
        )
    })?;
    let mut results = Results::new();
    for (name, v) in json.as_object().into_iter().flatten() {
        if v.get("skipped").is_some() {
            // Its tables are not in this export (no recording has the events).
            continue;
        }
        let t = match v.get("error") {
            Some(e) => Err(e.as_str().unwrap_or("").to_string()),
            None => Ok(Table {
                cols: v["columns"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| c.as_str().unwrap_or("").to_string())
                    .collect(),
                rows: v["rows"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| r.as_array().cloned().unwrap_or_default())
                    .collect(),
            }),
        };
        results.insert(name.clone(), t);
    }
    Ok(results)
}

fn which(cmd: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(cmd))
            .find(|f| f.is_file())
    })
}

pub(crate) fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

pub(crate) fn int(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f as u64))
        .unwrap_or(u64::MAX)
}

/// (samples, period, percent) by key.
type Totals = BTreeMap<Vec<String>, (u64, u64, f64)>;

/// Compares an engine's rows (keyed by `key` columns) with ours: samples, period and,
/// where both have one, the percentage to 0.01.
fn compare(t: &Table, recording: Option<u32>, key: &[&str], ours: &Totals) -> Vec<String> {
    let mut theirs = Totals::new();
    for r in &t.rows {
        if let Some(rec) = recording {
            if int(&t.col(r, "recording")) != u64::from(rec) {
                continue;
            }
        }
        let k: Vec<String> = key.iter().map(|c| text(&t.col(r, c))).collect();
        // Rows of one key add up (a query's rows may be finer than the reference's:
        // time_per_thread by pid and tid, `report --sort tid` by tid).
        let pct = t.col(r, "percent").as_f64().unwrap_or(f64::NAN);
        let e = theirs.entry(k).or_insert((0, 0, 0.0));
        e.0 += int(&t.col(r, "samples"));
        e.1 += int(&t.col(r, "period"));
        e.2 += pct;
    }
    let mut why = vec![];
    for (k, o) in ours {
        match theirs.get(k) {
            None => why.push(format!("{k:?}: ours {o:?}, none")),
            Some(x) => {
                let pct_ok = x.2.is_nan() || o.2.is_nan() || (x.2 - o.2).abs() <= 0.0101;
                if x.0 != o.0 || x.1 != o.1 || !pct_ok {
                    why.push(format!("{k:?}: ours {o:?}, engine {x:?}"));
                }
            }
        }
    }
    for k in theirs.keys().filter(|k| !ours.contains_key(*k)) {
        why.push(format!("{k:?}: engine {:?}, ours none", theirs[k]));
    }
    if theirs.is_empty() && !ours.is_empty() {
        why.push("no rows".into());
    }
    why.truncate(4);
    why
}

/// perfdata's numbers for one recording.
struct Reference {
    functions: Totals,
    dsos: Totals,
    threads: Totals,
    /// (event, stack) → period, for every event.
    folded: BTreeMap<(String, String), u64>,
    /// The distinct sampled addresses.
    ips: std::collections::BTreeSet<u64>,
}

fn report_totals(
    path: &Path,
    work: &Path,
    sort: Vec<SortKey>,
    filter: SampleFilter,
) -> Result<Vec<report::EventReport>, String> {
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let mut o = options(work);
    o.filter = filter;
    let mut a = Analyzer::open(&rec, &o).map_err(|e| e.to_string())?;
    let opts = ReportOptions {
        sort,
        relative: true,
        ..ReportOptions::table(Vec::new())
    };
    report::report(&mut a, &opts).map_err(|e| e.to_string())
}

/// Rows of a report as totals keyed by (event, the keys; `[k] `/`[.] ` stripped from a
/// symbol).
fn keyed(reports: &[report::EventReport], sort: &[SortKey]) -> Totals {
    let mut t = Totals::new();
    for r in reports {
        for row in &r.rows {
            let mut k = vec![r.event.clone()];
            for (v, s) in row.keys.iter().zip(sort) {
                k.push(match s {
                    SortKey::Sym => v.get(4..).unwrap_or("").to_string(),
                    _ => v.trim().to_string(),
                });
            }
            let e = t.entry(k).or_insert((0, 0, 0.0));
            e.0 += row.samples;
            e.1 += row.period;
            e.2 = e.1 as f64 * 100.0 / r.period.max(1) as f64;
        }
    }
    t
}

impl Reference {
    fn of(path: &Path, work: &Path) -> Result<Reference, String> {
        let sort = vec![SortKey::Dso, SortKey::Sym];
        let functions = keyed(
            &report_totals(path, work, sort.clone(), SampleFilter::default())?,
            &sort,
        );
        let sort = vec![SortKey::Dso];
        let dsos = keyed(
            &report_totals(path, work, sort.clone(), SampleFilter::default())?,
            &sort,
        );
        let sort = vec![SortKey::Tid];
        let mut threads = keyed(
            &report_totals(path, work, sort.clone(), SampleFilter::default())?,
            &sort,
        );
        for v in threads.values_mut() {
            v.2 = f64::NAN; // the query has no percentage
        }
        let rec = Recording::open(path).map_err(|e| e.to_string())?;
        let mut folded = BTreeMap::new();
        let events = Analyzer::open(&rec, &options(work))
            .map_err(|e| e.to_string())?
            .events
            .clone();
        for event in events {
            let mut a = Analyzer::open(&rec, &options(work)).map_err(|e| e.to_string())?;
            let copts = collapse::CollapseOptions {
                event: Some(event.clone()),
                ..collapse::CollapseOptions::default()
            };
            for (stack, w) in collapse::collapse(&mut a, &copts).map_err(|e| e.to_string())? {
                folded.insert((event.clone(), stack), w);
            }
        }
        let mut ips = std::collections::BTreeSet::new();
        let mut a = Analyzer::open(&rec, &options(work)).map_err(|e| e.to_string())?;
        a.run(
            Default::default(),
            |_, item| -> Result<bool, perfdata_analysis::AnalysisError> {
                if let Some(s) = &item.sample {
                    ips.insert(s.ip);
                }
                Ok(true)
            },
        )
        .map_err(|e| e.to_string())?;
        Ok(Reference {
            functions,
            dsos,
            threads,
            folded,
            ips,
        })
    }

    /// Every sampled address once, printed as `0x` and 16 hex digits.
    fn addresses(&self, t: &Table, rec: u32) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        let mut why = vec![];
        for r in &t.rows {
            if int(&t.col(r, "recording")) != u64::from(rec) {
                continue;
            }
            let ip = int(&t.col(r, "ip"));
            let hex = text(&t.col(r, "ip_hex"));
            if hex != format!("{ip:#018x}") {
                why.push(format!("{ip} printed {hex:?}"));
            }
            seen.insert(ip);
        }
        if seen != self.ips {
            why.push(format!(
                "{} distinct addresses, perfdata's samples have {}",
                seen.len(),
                self.ips.len()
            ));
        }
        why.truncate(4);
        why
    }

    fn functions(&self, t: &Table, rec: u32) -> Vec<String> {
        compare(t, Some(rec), &["event", "dso", "symbol"], &self.functions)
    }

    fn dsos(&self, t: &Table, rec: u32) -> Vec<String> {
        compare(t, Some(rec), &["event", "dso"], &self.dsos)
    }

    fn threads(&self, t: &Table, rec: u32) -> Vec<String> {
        let mut why = compare(t, Some(rec), &["event", "tid"], &self.threads);
        // Each thread's last name is one of its names.
        for r in &t.rows {
            if int(&t.col(r, "recording")) == u64::from(rec) {
                let (comm, names) = (text(&t.col(r, "comm")), text(&t.col(r, "names")));
                if !names.split(',').any(|n| n == comm) {
                    why.push(format!("last name {comm:?} not among {names:?}"));
                }
            }
        }
        why
    }

    fn folded(&self, t: &Table, rec: u32) -> Vec<String> {
        let mut theirs = BTreeMap::new();
        for r in &t.rows {
            if int(&t.col(r, "recording")) == u64::from(rec) {
                theirs.insert(
                    (text(&t.col(r, "event")), text(&t.col(r, "stack"))),
                    int(&t.col(r, "period")),
                );
            }
        }
        if theirs == self.folded {
            return vec![];
        }
        let mut why: Vec<String> = self
            .folded
            .iter()
            .filter(|(k, w)| theirs.get(*k) != Some(*w))
            .map(|(k, w)| format!("collapse {k:?} {w}, engine {:?}", theirs.get(k)))
            .chain(
                theirs
                    .iter()
                    .filter(|(k, _)| !self.folded.contains_key(*k))
                    .map(|(k, w)| format!("engine only {k:?} {w}")),
            )
            .collect();
        why.truncate(4);
        why
    }

    /// The five largest processes' totals against `report --pid P` (relative).
    fn processes(&self, t: &Table, rec: u32, path: &Path, work: &Path) -> Vec<String> {
        let mut rows: Vec<&Vec<Value>> = t
            .rows
            .iter()
            .filter(|r| int(&t.col(r, "recording")) == u64::from(rec))
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse(int(&t.col(r, "period"))));
        let mut why = vec![];
        for r in rows.into_iter().take(5) {
            let pid = t.col(r, "pid").as_i64().unwrap_or(-1) as i32;
            let filter = SampleFilter {
                pids: Some(vec![pid]),
                ..SampleFilter::default()
            };
            let what = format!("report --pid {pid}");
            why.extend(filtered_totals_differ(t, r, path, work, filter, &what));
        }
        why
    }

    /// The first, middle and last buckets against `report --time` over their windows.
    fn histogram(&self, t: &Table, rec: u32, path: &Path, work: &Path) -> Vec<String> {
        let rows: Vec<&Vec<Value>> = t
            .rows
            .iter()
            .filter(|r| int(&t.col(r, "recording")) == u64::from(rec))
            .collect();
        if rows.is_empty() {
            return vec![];
        }
        let t0 = match first_sample_time(path, work) {
            Ok(Some(t0)) => t0,
            Ok(None) => return vec![format!("{} buckets, but no sample has a time", rows.len())],
            Err(e) => return vec![e],
        };
        let mut why = vec![];
        for r in [rows[0], rows[rows.len() / 2], rows[rows.len() - 1]] {
            let bucket = int(&t.col(r, "bucket"));
            let (a, b) = (t0 + bucket * 10_000_000, t0 + (bucket + 1) * 10_000_000 - 1);
            let secs = |t: u64| format!("{}.{:09}", t / 1_000_000_000, t % 1_000_000_000);
            let window = format!("{},{}", secs(a), secs(b));
            let time = match TimeSpec::parse(&window, false) {
                Ok(t) => t,
                Err(e) => {
                    why.push(e.to_string());
                    continue;
                }
            };
            let filter = SampleFilter {
                time: Some(time),
                ..SampleFilter::default()
            };
            let what = format!("bucket {bucket}: report --time {window}");
            why.extend(filtered_totals_differ(t, r, path, work, filter, &what));
        }
        why
    }
}

/// An engine row's samples and period against `report`'s totals for its event under
/// `filter` (relative: the samples the filter selects); `None` when equal.
fn filtered_totals_differ(
    t: &Table,
    r: &[Value],
    path: &Path,
    work: &Path,
    filter: SampleFilter,
    what: &str,
) -> Option<String> {
    let event = text(&t.col(r, "event"));
    let theirs = (int(&t.col(r, "samples")), int(&t.col(r, "period")));
    match report_totals(path, work, vec![SortKey::Comm], filter) {
        Err(e) => Some(format!("{what}: {e}")),
        Ok(reports) => {
            let ours = reports
                .iter()
                .find(|x| x.event == event)
                .map(|x| (x.samples, x.period));
            (ours != Some(theirs))
                .then(|| format!("{what} {event}: engine {theirs:?}, ours {ours:?}"))
        }
    }
}

fn first_sample_time(path: &Path, work: &Path) -> Result<Option<u64>, String> {
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let mut a = Analyzer::open(&rec, &options(work)).map_err(|e| e.to_string())?;
    let mut first = None::<u64>;
    a.run(
        Default::default(),
        |_, item| -> Result<bool, perfdata_analysis::AnalysisError> {
            if let Some(t) = item.sample.as_ref().and_then(|s| s.time) {
                first = Some(first.map_or(t, |f| f.min(t)));
            }
            Ok(true)
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(first)
}

/// `top_functions_all`'s reference: the recordings' `report --sort dso,sym` summed.
fn all_recordings_reference(files: &[PathBuf], work: &Path) -> Result<Totals, String> {
    let sort = vec![SortKey::Dso, SortKey::Sym];
    let mut all = Totals::new();
    let mut event_totals: BTreeMap<String, u64> = BTreeMap::new();
    for f in files {
        let reports = report_totals(f, work, sort.clone(), SampleFilter::default())?;
        for r in &reports {
            *event_totals.entry(r.event.clone()).or_default() += r.period;
        }
        for (k, v) in keyed(&reports, &sort) {
            let e = all.entry(k).or_insert((0, 0, 0.0));
            e.0 += v.0;
            e.1 += v.1;
        }
    }
    for (k, v) in all.iter_mut() {
        v.2 = v.1 as f64 * 100.0 / event_totals[&k[0]].max(1) as f64;
    }
    Ok(all)
}

fn compare_all(all: &Totals, t: &Table) -> Vec<String> {
    compare(t, None, &["event", "dso", "symbol"], all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table(rows: Vec<Value>) -> Table {
        Table {
            cols: ["recording", "event", "dso", "samples", "period", "percent"]
                .map(String::from)
                .to_vec(),
            rows: rows
                .into_iter()
                .map(|r| r.as_array().unwrap().clone())
                .collect(),
        }
    }

    #[test]
    fn engine_rows_compare_by_key_per_recording() {
        let ours: Totals = [
            (vec!["e".into(), "libc".into()], (3, 300, 75.0)),
            (vec!["e".into(), "prog".into()], (1, 100, 25.0)),
        ]
        .into();
        let good = table(vec![
            json!([0, "e", "libc", 3, 300, 75.0]),
            json!([0, "e", "prog", 1, 100, 25.0]),
            json!([1, "e", "other", 9, 900, 100.0]),
        ]);
        assert!(compare(&good, Some(0), &["event", "dso"], &ours).is_empty());
        // A doubled period (the old threads join), a missing row, a percent off by 0.02.
        let bad = table(vec![
            json!([0, "e", "libc", 3, 600, 75.0]),
            json!([0, "e", "extra", 1, 1, 0.02]),
        ]);
        let why = compare(&bad, Some(0), &["event", "dso"], &ours);
        assert_eq!(why.len(), 3, "{why:?}");
        let off = table(vec![
            json!([0, "e", "libc", 3, 300, 75.02]),
            json!([0, "e", "prog", 1, 100, 25.0]),
        ]);
        assert_eq!(compare(&off, Some(0), &["event", "dso"], &ours).len(), 1);
        // Nothing at all is a failure, not a pass.
        assert!(!compare(&table(vec![]), Some(0), &["event", "dso"], &ours).is_empty());
    }
}
