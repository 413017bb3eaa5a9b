//! Conformance suite: the system `perf` is the referee.
//!
//! For every scenario of the matrix (`scenarios.rs`) a file is recorded fresh with the
//! system perf (`record.rs`), then perf's own views of it — `perf report --header-only -I`,
//! `perf report -D`, `perf script` — are parsed (`perf_text.rs`) and compared value by
//! value with perfdata's decode (`ours.rs`, `expect.rs`, `checks.rs`). The result is a
//! table, scenario × check (`report.rs`). Checks:
//!
//! 1. header: every value of `perf report --header-only -I` equals our decoded value;
//! 2. records: the records of `perf report -D` are ours (offset, size, type) and every
//!    value perf prints for a record equals ours (bytes too, from perf's hex dump);
//! 3. samples: `perf script -F <every field that applies>`, sample by sample (and the
//!    tracepoint fields, and `perf stat record` counts);
//! 4. rewrite and 5. perf reads what we write: need the writer (not built yet: skipped);
//! 6. corpus: every file of `../shared/corpus/` decodes; checks 1-3 where perf 6.1 reads it.
//!
//! `cargo xtask conformance` runs it live; `tests/against_stored_perf_output.rs` runs
//! checks 1-3 on the committed fixtures against perf's stored output (`fixtures/perf-output`).

pub mod checks;
pub mod expect;
pub mod facts;
pub mod ours;
pub mod perf_text;
pub mod record;
pub mod report;
pub mod scenarios;
pub mod tracepoint;

use anyhow::{Context, Result};
use checks::{Outcome, ScriptPlan};
use ours::Decoded;
use report::Row;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The reason checks 4 and 5 are skipped this round.
pub const WRITER_NOT_BUILT: &str = "writer not built yet";

/// Corpus files whose decode must stop with an error, and why.
pub const CORPUS_EXPECTED_ERRORS: &[(&str, &str)] = &[
    (
        "perf.data.broken.gz",
        "not a perf.data file (gzip): the decode must fail with a clear error",
    ),
    (
        "sleep.compressed2.pipe.data",
        "perf record's stderr text was appended after the last record (MANIFEST.md)",
    ),
];

/// perf's text views of one file (each may have failed).
#[derive(Debug, Default)]
pub struct PerfViews {
    pub header: Option<Result<String, String>>,
    pub dump: Option<Result<String, String>>,
    pub script: Option<Result<String, String>>,
    pub trace: Option<Result<String, String>>,
}

/// Runs perf on `path` for every view the checks need.
pub fn live_views(path: &Path, plan: &ScriptPlan) -> PerfViews {
    let s = |r: Result<String>| Some(r.map_err(|e| format!("{e:#}")));
    PerfViews {
        header: s(record::perf_header(path)),
        dump: s(record::perf_dump(path)),
        script: match plan {
            ScriptPlan::Nothing => None,
            _ => s(record::perf_script(path, &plan.args())),
        },
        trace: plan
            .trace_args()
            .and_then(|a| s(record::perf_script(path, &a))),
    }
}

/// The largest `perf_event_attr` perf 6.1 reads (`PERF_ATTR_SIZE_VER7`).
pub const PERF_ATTR_SIZE_MAX: u32 = 128;

/// The last record type perf 6.1 knows (`PERF_RECORD_FINISHED_INIT`).
pub const PERF_LAST_RECORD: u32 = 82;

/// Why perf 6.1 cannot give its view of (part of) a file: (header, records and samples).
pub fn perf_limits(d: &Decoded) -> (Option<String>, Option<String>) {
    let big = d
        .attrs
        .iter()
        .map(|a| a.attr.size)
        .filter(|&s| s > PERF_ATTR_SIZE_MAX)
        .max();
    if let (Some(size), perfdata::container::Layout::File) = (big, d.layout) {
        let why = format!(
            "attr size {size} newer than perf 6.1 (at most {PERF_ATTR_SIZE_MAX}): perf refuses the attrs"
        );
        return (Some(why.clone()), Some(why));
    }
    let newer = d
        .records
        .iter()
        .map(|r| r.type_.0)
        .filter(|&t| t > PERF_LAST_RECORD && t < 0x10000)
        .min();
    if let Some(t) = newer {
        return (
            None,
            Some(format!(
                "record type {t} newer than perf 6.1: perf stops at the first one"
            )),
        );
    }
    (None, None)
}

/// Checks 1-3 of a decoded file against perf's views, into `row`.
pub fn run_checks(d: &Decoded, views: &PerfViews, row: &mut Row) {
    let (header_limit, records_limit) = perf_limits(d);
    run_checks_unlimited(d, views, row);
    if let Some(why) = header_limit {
        row.set("header", Outcome::Skip(why));
    }
    if let Some(why) = records_limit {
        row.set("records", Outcome::Skip(why.clone()));
        row.set("samples", Outcome::Skip(why));
    }
}

fn run_checks_unlimited(d: &Decoded, views: &PerfViews, row: &mut Row) {
    let perf_failed = |e: &str| Outcome::Fail(vec![format!("perf failed: {e}")]);
    match &views.header {
        Some(Ok(t)) => {
            let (o, notes) = checks::check_header(t, d);
            row.set("header", o);
            row.notes
                .extend(notes.into_iter().map(|n| format!("header: {n}")));
        }
        Some(Err(e)) => row.set("header", perf_failed(e)),
        None => row.set("header", Outcome::Skip("no perf output".into())),
    }
    match &views.dump {
        Some(Ok(t)) => {
            let (o, notes) = checks::check_records(t, d);
            row.set("records", o);
            row.notes
                .extend(notes.into_iter().map(|n| format!("records: {n}")));
        }
        Some(Err(e)) => row.set("records", perf_failed(e)),
        None => row.set("records", Outcome::Skip("no perf output".into())),
    }
    let plan = ScriptPlan::for_file(d);
    let trace = match &views.trace {
        Some(Ok(t)) => Some(t.as_str()),
        Some(Err(e)) => {
            row.set("samples", perf_failed(e));
            return;
        }
        None => None,
    };
    match (&plan, &views.script) {
        (ScriptPlan::Nothing, _) => row.set("samples", Outcome::Skip("no samples".into())),
        (_, Some(Ok(t))) => {
            let (o, notes) = checks::check_samples(&plan, t, trace, d);
            row.set("samples", o);
            row.notes
                .extend(notes.into_iter().map(|n| format!("samples: {n}")));
        }
        (_, Some(Err(e))) => row.set("samples", perf_failed(e)),
        (_, None) => row.set("samples", Outcome::Skip("no perf output".into())),
    }
}

/// Check 6 for one file: it decodes (every feature and every record), or fails where
/// `CORPUS_EXPECTED_ERRORS` says it must.
pub fn decode_check(path: &Path) -> (Outcome, Option<Decoded>) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let expected = CORPUS_EXPECTED_ERRORS.iter().find(|(n, _)| *n == name);
    let d = match ours::load(path) {
        Ok(d) => d,
        Err(e) => {
            return match expected {
                Some((_, why)) => (
                    Outcome::Pass(format!("fails as expected ({why}): {e:#}")),
                    None,
                ),
                None => (Outcome::Fail(vec![format!("{e:#}")]), None),
            };
        }
    };
    let mut problems: Vec<String> = d.errors.clone();
    for f in &d.features {
        if let Err(e) = &f.body {
            problems.push(format!("feature {:?}: {e}", f.id));
        }
    }
    for r in &d.records {
        if let Err(e) = &r.body {
            problems.push(format!("record {}: {e}", r.place()));
        }
    }
    let summary = format!(
        "{} features, {} records decode",
        d.features.len(),
        d.records.len()
    );
    let o = match (expected, problems.is_empty()) {
        (None, true) => Outcome::Pass(summary),
        (Some((_, why)), false) => Outcome::Pass(format!(
            "{summary} before the expected error ({why}): {}",
            problems[0]
        )),
        (Some((_, why)), true) => Outcome::Fail(vec![format!(
            "expected an error ({why}) but everything decoded"
        )]),
        (None, false) => {
            let mut lines: Vec<String> = problems.iter().take(checks::SHOW).cloned().collect();
            lines.push(format!("({} problems)", problems.len()));
            Outcome::Fail(lines)
        }
    };
    (o, Some(d))
}

/// Options of the live run.
#[derive(Debug, Default, Clone)]
pub struct LiveOptions {
    /// Record into this directory (kept) instead of a temporary one.
    pub keep: Option<PathBuf>,
    /// Only these scenarios / corpus files (all when empty).
    pub only: Vec<String>,
    /// Print what passed and the notes too.
    pub verbose: bool,
    /// The corpus directory (default `../shared/corpus` beside the workspace).
    pub corpus: Option<PathBuf>,
}

fn wanted(opts: &LiveOptions, name: &str) -> bool {
    opts.only.is_empty() || opts.only.iter().any(|o| o == name)
}

/// `cargo xtask conformance`: records every scenario live, runs the checks, prints the
/// table. Returns whether every failure is a listed known failure.
pub fn run_live(workspace: &Path, opts: &LiveOptions) -> Result<bool> {
    let started = Instant::now();
    let version = record::perf_version()?;
    println!(
        "conformance: system {version}; recording {} scenarios",
        scenarios::SCENARIOS.len()
    );
    let tmp;
    let dir = match &opts.keep {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d.clone()
        }
        None => {
            tmp = tempfile::Builder::new()
                .prefix("perfdata-conformance")
                .tempdir()?;
            tmp.path().to_path_buf()
        }
    };
    let mut rows = vec![];
    for s in scenarios::SCENARIOS {
        if !wanted(opts, s.name) && !opts.only.iter().any(|o| scenario_needs(o, s.name)) {
            continue;
        }
        let t = Instant::now();
        let recorded = record::record(s, &dir)?;
        if !wanted(opts, s.name) {
            continue; // recorded only as the source of an inject scenario
        }
        let mut row = Row::new(s.name);
        match recorded {
            record::Recorded::Skipped(why) => row.all(&Outcome::Skip(why)),
            record::Recorded::Path(p) => {
                check_path(&p, &mut row);
                row.set("rewrite", Outcome::Skip(WRITER_NOT_BUILT.into()));
                row.set("perf-reads", Outcome::Skip(WRITER_NOT_BUILT.into()));
                row.set("corpus", Outcome::Skip("n/a".into()));
            }
        }
        eprintln!("  {:<22} {:>5} ms", s.name, t.elapsed().as_millis());
        rows.push(row);
    }
    let corpus = opts
        .corpus
        .clone()
        .unwrap_or_else(|| workspace.join("../shared/corpus"));
    rows.extend(corpus_rows(&corpus, opts)?);
    let known = report::load_known_failures(&workspace.join("conformance/known-failures.txt"))?;
    print!("\n{}", report::render(&rows, &known, opts.verbose));
    let v = report::verdict(&rows, &known);
    for k in &v.stale {
        println!(
            "note: known failure `{} {}` no longer fails; remove it from known-failures.txt",
            k.row, k.check
        );
    }
    println!(
        "\nconformance: {} rows, {} unexpected failures, {} known failures, {:.1} s",
        rows.len(),
        v.unexpected.len(),
        v.known.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(v.ok())
}

/// Is `dep` the inject source of scenario `name`?
fn scenario_needs(name: &str, dep: &str) -> bool {
    scenarios::by_name(name).is_some_and(|s| {
        matches!(s.mode, scenarios::Mode::Inject { from } | scenarios::Mode::InjectPipe { from } if from == dep)
    })
}

/// Decodes a recorded file and runs checks 1-3 live into `row`.
fn check_path(p: &Path, row: &mut Row) {
    match ours::load(p) {
        Ok(d) => {
            let plan = ScriptPlan::for_file(&d);
            let views = live_views(p, &plan);
            run_checks(&d, &views, row);
        }
        Err(e) => {
            let o = Outcome::Fail(vec![format!("our decode failed: {e:#}")]);
            for c in ["header", "records", "samples"] {
                row.set(c, o.clone());
            }
        }
    }
}

/// The corpus rows: check 6, and checks 1-3 where perf 6.1 can read the file.
fn corpus_rows(dir: &Path, opts: &LiveOptions) -> Result<Vec<Row>> {
    if !dir.is_dir() {
        println!(
            "conformance: corpus {} is absent: check 6 not run",
            dir.display()
        );
        return Ok(vec![]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_none_or(|e| e != "md"))
        .collect();
    files.sort();
    let mut rows = vec![];
    for f in files {
        let name = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if !wanted(opts, &name) && !wanted(opts, "corpus") {
            continue;
        }
        let mut row = Row::new(format!("corpus:{name}"));
        let (o, d) = decode_check(&f);
        row.set("corpus", o);
        row.set("rewrite", Outcome::Skip(WRITER_NOT_BUILT.into()));
        row.set("perf-reads", Outcome::Skip(WRITER_NOT_BUILT.into()));
        match d {
            None => {
                // Only the expected-error files get here (check 6 fails otherwise).
                for c in ["header", "records", "samples"] {
                    row.set(c, Outcome::Skip("not a perf.data file".into()));
                }
            }
            Some(d) => {
                // Does perf 6.1 read it at all?
                match record::perf_header(&f) {
                    Err(e) => {
                        let why = format!("perf 6.1 cannot read it: {e:#}");
                        for c in ["header", "records", "samples"] {
                            row.set(c, Outcome::Skip(why.clone()));
                        }
                    }
                    Ok(_) => {
                        let plan = ScriptPlan::for_file(&d);
                        let views = live_views(&f, &plan);
                        run_checks(&d, &views, &mut row);
                    }
                }
            }
        }
        rows.push(row);
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------------------
// Stored perf output for the committed fixtures
// ---------------------------------------------------------------------------------------

/// The fixtures directory and the stored-output directory inside it.
pub fn fixtures_dir(workspace: &Path) -> PathBuf {
    workspace.join("conformance/fixtures")
}

pub fn oracle_dir(workspace: &Path) -> PathBuf {
    fixtures_dir(workspace).join("perf-output")
}

/// The fixtures: `*.data` files and directories, sorted.
pub fn fixtures(workspace: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(fixtures_dir(workspace))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .collect();
    out.sort();
    Ok(out)
}

/// The stored-output stem of a fixture: its file name without `.data`.
pub fn fixture_stem(p: &Path) -> String {
    let n = p.file_name().unwrap_or_default().to_string_lossy();
    n.strip_suffix(".data").unwrap_or(&n).to_string()
}

/// Drops the hex dumps (and blank lines) from `perf report -D`: they only repeat the
/// file's bytes, which are committed anyway.
pub fn strip_hex(dump: &str) -> String {
    let mut out = String::new();
    for l in dump.lines() {
        if l == "." || l.starts_with(". ") || l.trim().is_empty() {
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

const SCRIPT_MARK: &str = "#conformance: perf script";

/// `cargo xtask conformance --refresh-oracle`: runs perf on every committed fixture and
/// stores its output beside them. Returns the files written.
pub fn refresh_oracle(workspace: &Path) -> Result<Vec<PathBuf>> {
    record::perf_version()?;
    let dir = oracle_dir(workspace);
    std::fs::create_dir_all(&dir)?;
    let mut written = vec![];
    for f in fixtures(workspace)? {
        let stem = fixture_stem(&f);
        let d = ours::load(&f).with_context(|| format!("decoding {}", f.display()))?;
        let plan = ScriptPlan::for_file(&d);
        let mut put = |ext: &str, text: String| -> Result<()> {
            let p = dir.join(format!("{stem}.{ext}.txt"));
            std::fs::write(&p, text)?;
            written.push(p);
            Ok(())
        };
        put("header", record::perf_header(&f)?)?;
        put("dump", strip_hex(&record::perf_dump(&f)?))?;
        if plan != ScriptPlan::Nothing {
            let args = plan.args();
            let text = record::perf_script(&f, &args)?;
            put(
                "script",
                format!("{SCRIPT_MARK} {}\n{text}", args.join(" ")),
            )?;
        }
        if let Some(args) = plan.trace_args() {
            let text = record::perf_script(&f, &args)?;
            put("trace", format!("{SCRIPT_MARK} {}\n{text}", args.join(" ")))?;
        }
    }
    Ok(written)
}

/// perf's stored views of a fixture. A stored script output made with other arguments
/// than the plan's is reported as a failure (refresh the stored output).
pub fn stored_views(workspace: &Path, fixture: &Path, plan: &ScriptPlan) -> PerfViews {
    let dir = oracle_dir(workspace);
    let stem = fixture_stem(fixture);
    let read = |ext: &str| -> Option<Result<String, String>> {
        let p = dir.join(format!("{stem}.{ext}.txt"));
        match std::fs::read_to_string(&p) {
            Ok(t) => Some(Ok(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => Some(Err(format!("{}: {e}", p.display()))),
        }
    };
    let with_args = |v: Option<Result<String, String>>, args: Option<Vec<String>>| {
        let v = v?;
        let Ok(text) = v else { return Some(v) };
        let want = format!("{SCRIPT_MARK} {}", args.unwrap_or_default().join(" "));
        match text.lines().next() {
            Some(first) if first == want => Some(Ok(text)),
            first => Some(Err(format!(
                "stored output of {stem} was made with `{}`, the plan is `{want}`: run `cargo xtask conformance --refresh-oracle`",
                first.unwrap_or("")
            ))),
        }
    };
    PerfViews {
        header: read("header"),
        dump: read("dump"),
        script: with_args(read("script"), Some(plan.args())),
        trace: with_args(read("trace"), plan.trace_args()),
    }
}

/// The row name of a fixture: its stem without `.pipe`.
pub fn fixture_row(p: &Path) -> String {
    let stem = fixture_stem(p);
    stem.strip_suffix(".pipe").unwrap_or(&stem).to_string()
}

/// Checks 1-3 of every committed fixture against perf's stored output.
pub fn stored_rows(workspace: &Path) -> Result<Vec<Row>> {
    let mut rows = vec![];
    for f in fixtures(workspace)? {
        let mut row = Row::new(fixture_row(&f));
        match ours::load(&f) {
            Ok(d) => {
                let plan = ScriptPlan::for_file(&d);
                let views = stored_views(workspace, &f, &plan);
                run_checks(&d, &views, &mut row);
            }
            Err(e) => row.all(&Outcome::Fail(vec![format!("our decode failed: {e:#}")])),
        }
        row.set("rewrite", Outcome::Skip(WRITER_NOT_BUILT.into()));
        row.set("perf-reads", Outcome::Skip(WRITER_NOT_BUILT.into()));
        row.set("corpus", Outcome::Skip("n/a".into()));
        rows.push(row);
    }
    Ok(rows)
}
