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
//! 4. rewrite: the writer's copy-through and typed rewrites are byte-identical to the input
//!    (`variants::rewrite`);
//! 5. perf reads what we write: a copy-through rewrite, the other byte order, the other
//!    layout and the other compression state (`variants::build`) give the same
//!    `perf script` and `perf report -D` record contents as the original, up to what each
//!    conversion legitimately changes (`checks::ReadsNorm`);
//! 6. corpus: every file of `../shared/corpus/` decodes; checks 1-5 where perf 6.1 reads it;
//! 7. (and 8, 9) our analyses against perf's and inferno's, and DuckDB on our Parquet
//!    export ([`analyses`]);
//! 10. (and 11, 12) on the `--call-graph dwarf` rows: unwound stacks with inline frames
//!     against `perf script`'s, `report -g`'s caller chains against
//!     `perf report -g folded`'s, and `convert --unwind`'s output as perf reads it against
//!     the original ([`unwind`]).
//! 14. `perf diff` of each row's recording against the `plain` one, byte for byte
//!     ([`diffs`]);
//! 15. on the `off-cpu` row: off-CPU time per thread against `perf sched timehist`
//!     ([`offcpu`]);
//! 17. on the `sched-*` rows, recorded with `perf sched record`: `perfdata sched`'s
//!     timehist, latency and map against perf sched's, byte for byte ([`sched`];
//!     `--only sched` runs them alone);
//! 19. `perfdata annotate -l` against `perf annotate --stdio -l`: every instruction's
//!     address and percentage, the instruction text, the source lines before each
//!     instruction, and each function's source-line summary ([`annotate`]);
//! 20. perf's Python scripts (`perf script -s`) run by perfdata's host print perf's bytes
//!     ([`pyscript`]; `--only pyscript` runs them alone);
//! 21. on the rows with tracepoint events: the tracepoint tables (Parquet, Python, Spark)
//!     row by row against `perf script -F …,trace`'s plain fields
//!     ([`tracepoint::check_tables`]).
//!
//! A second table covers the gperftools CPU profile ([`gperftools`]): real libprofiler
//! profiles, crafted 32-bit and big-endian ones, and our perf.data conversions, read by
//! `google-pprof`, `go tool pprof` and perf (`--only gperftools` runs it alone).
//!
//! `cargo xtask conformance` runs it live; `tests/against_stored_perf_output.rs` runs
//! checks 1-4 on the committed fixtures against perf's stored output (`fixtures/perf-output`).

pub mod analyses;
pub mod annotate;
pub mod checks;
pub mod cut_short;
pub mod diffs;
pub mod expect;
pub mod facts;
pub mod filters;
pub mod gperftools;
pub mod offcpu;
pub mod ours;
pub mod perf_text;
pub mod pprof;
pub mod programs;
pub mod pyscript;
pub mod record;
pub mod report;
pub mod scenarios;
pub mod sched;
pub mod script;
pub mod sql;
mod trace_queries;
pub mod tracepoint;
pub mod unwind;
pub mod variants;

use anyhow::{Context, Result};
use checks::{Outcome, ReadsNorm, ReadsView, ScriptPlan};
use ours::Decoded;
use perfdata::Layout;
use report::Row;
use std::path::{Path, PathBuf};
use std::time::Instant;
use variants::{Built, Kind, Variant};

/// Why check 5 is not run by `cargo test` (it needs the system perf).
pub const PERF_READS_LIVE_ONLY: &str = "needs the system perf: cargo xtask conformance";

/// Inputs the model refuses to rewrite, and why (check 4 skips them with the reason; any
/// other refusal is a failure).
pub const REWRITE_REFUSED: &[(&str, &str)] = &[
    ("perf.data.broken.gz", "not a perf.data file (gzip)"),
    (
        "sleep.compressed2.pipe.data",
        "text perf record printed was appended after the last record: the model keeps records only, so a rewrite would drop bytes",
    ),
];

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
    if let (Some(size), perfdata::Layout::File) = (big, d.layout) {
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
    /// `--no-retry`: a live scenario that fails is not recorded again (by default it
    /// is, once, and fails only if both recordings do).
    pub no_retry: bool,
}

fn wanted(opts: &LiveOptions, name: &str) -> bool {
    opts.only.is_empty() || opts.only.iter().any(|o| o == name)
}

/// `--only unwind` selects every scenario recorded with `--call-graph dwarf` (the rows
/// of checks 10 and 11).
pub const UNWIND_GROUP: &str = "unwind";

fn wanted_scenario(opts: &LiveOptions, s: &scenarios::Scenario) -> bool {
    wanted(opts, s.name) || (s.unwinds() && opts.only.iter().any(|o| o == UNWIND_GROUP))
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
    let known = report::load_known_failures(&workspace.join("conformance/known-failures.txt"))?;
    let mut rows = vec![];
    let mut exported: Vec<(usize, PathBuf)> = vec![];
    // Live rows that failed on their first recording and passed on a second.
    let mut flaky: Vec<Row> = vec![];
    // `--no-retry`: a failing live row is not recorded again.
    let retry = |row: &Row| !opts.no_retry && report::needs_second_recording(row, &known);
    // The baseline of check 14 (diff): the `plain` row's recording, recorded first.
    let mut baseline: Option<PathBuf> = None;
    let tools = gperftools::Tools::find(&dir);
    for s in scenarios::SCENARIOS {
        let is_baseline = s.name == DIFF_BASELINE;
        if !wanted_scenario(opts, s)
            && !opts.only.iter().any(|o| scenario_needs(o, s.name))
            && !is_baseline
        {
            continue;
        }
        let t = Instant::now();
        let recorded = record::record(s, &dir)?;
        if let (true, record::Recorded::Path(p)) = (is_baseline, &recorded) {
            baseline = Some(p.clone());
        }
        if !wanted_scenario(opts, s) {
            continue; // recorded only as the source of an inject scenario
        }
        let mut row = Row::new(s.name);
        match recorded {
            record::Recorded::Skipped(why) => row.all(&Outcome::Skip(why)),
            record::Recorded::Path(p) => {
                check_recording(s, &p, &dir, baseline.as_deref(), &tools, &mut row);
                if retry(&row) {
                    // A live recording samples a program that runs differently each time,
                    // and perf's unwinder fails on some rare samples (cut_short.rs): a
                    // failure is recorded again once, and stays a failure only if the
                    // second recording fails too. Either way the first one's failures are
                    // printed at the end.
                    let first = p.with_extension("first-try");
                    std::fs::rename(&p, &first)
                        .with_context(|| format!("moving {} aside", p.display()))?;
                    eprintln!("  {:<22} failed: recording it again", s.name);
                    let mut again = Row::new(s.name);
                    match record::record(s, &dir)? {
                        record::Recorded::Skipped(why) => again.all(&Outcome::Skip(why)),
                        record::Recorded::Path(p2) => {
                            check_recording(s, &p2, &dir, baseline.as_deref(), &tools, &mut again)
                        }
                    }
                    if !report::needs_second_recording(&again, &known) {
                        flaky.push(std::mem::replace(&mut row, again));
                    } else {
                        row.notes.push(report::FAILED_TWICE.into());
                        // The first recording's failures are the row's: put it back (a
                        // `--threads` recording is a directory, which rename does not
                        // replace).
                        if p.is_dir() {
                            std::fs::remove_dir_all(&p)
                                .with_context(|| format!("removing {}", p.display()))?;
                        }
                        std::fs::rename(&first, &p)
                            .with_context(|| format!("restoring {}", p.display()))?;
                    }
                }
                exported.push((rows.len(), p.clone()));
            }
        }
        eprintln!("  {:<22} {:>5} ms", s.name, t.elapsed().as_millis());
        rows.push(row);
    }
    if !exported.is_empty() {
        let t = Instant::now();
        let files: Vec<PathBuf> = exported.iter().map(|(_, p)| p.clone()).collect();
        for ((row, _), o) in exported.iter().zip(sql::check_sql(&files, &dir, workspace)) {
            rows[*row].set("sql", o);
        }
        eprintln!(
            "  {:<22} {:>5} ms",
            "parquet + 3 engines",
            t.elapsed().as_millis()
        );
    }
    if opts.only.is_empty()
        || opts
            .only
            .iter()
            .any(|o| o == sched::GROUP || sched::SCENARIOS.iter().any(|s| s.name == o))
    {
        rows.extend(sched::run(&dir, &opts.only));
    }
    if opts.only.is_empty()
        || opts
            .only
            .iter()
            .any(|o| o == pyscript::GROUP || pyscript::SCENARIOS.iter().any(|s| s.name == o))
    {
        rows.extend(pyscript::run(
            &dir, &opts.only, workspace, &retry, &mut flaky,
        ));
    }
    let corpus = opts
        .corpus
        .clone()
        .unwrap_or_else(|| workspace.join("../shared/corpus"));
    rows.extend(corpus_rows(&corpus, &dir, opts)?);
    // The gperftools CPU profile section (`--only gperftools` selects it alone).
    let gp_rows = if opts.only.is_empty() || wanted(opts, "gperftools") {
        let t = Instant::now();
        let r = gperftools::run(workspace, &dir);
        eprintln!(
            "  {:<22} {:>5} ms",
            "gperftools section",
            t.elapsed().as_millis()
        );
        r
    } else {
        vec![]
    };
    print!("\n{}", report::render(&rows, &known, opts.verbose));
    if !gp_rows.is_empty() {
        print!("\n{}", gperftools::render(&gp_rows, opts.verbose));
    }
    let gp_failures = gp_rows
        .iter()
        .flat_map(|r| &r.cells)
        .filter(|o| o.is_fail())
        .count();
    let v = report::verdict(&rows, &known);
    // Last, where a log's tail shows them: the failures of the rows that passed only on a
    // second recording, then the unexpected failures again.
    print!("{}", report::render_failures_again(&flaky, &rows, &known));
    for k in &v.stale {
        println!(
            "note: known failure `{} {}` no longer fails; remove it from known-failures.txt",
            k.row, k.check
        );
    }
    println!(
        "\nconformance: {} rows, {} unexpected failures, {} known failures, {} passed only when recorded again; gperftools: {} rows, {} failures; {:.1} s",
        rows.len(),
        v.unexpected.len(),
        v.known.len(),
        flaky.len(),
        gp_rows.len(),
        gp_failures,
        started.elapsed().as_secs_f64()
    );
    Ok(v.ok() && gp_failures == 0)
}

/// Checks a live scenario's recording `p` into `row` (every column the scenario has).
fn check_recording(
    s: &scenarios::Scenario,
    p: &Path,
    dir: &Path,
    baseline: Option<&Path>,
    tools: &gperftools::Tools,
    row: &mut Row,
) {
    let checked = check_path(p, row);
    row.set("rewrite", rewrite_check(p));
    row.set(
        "perf-reads",
        match &checked {
            Some((d, views)) => perf_reads_check(p, d, views, dir, s.variants()),
            None => Outcome::Skip("our decode failed (checks 1-3)".into()),
        },
    );
    row.set("corpus", Outcome::Skip("n/a".into()));
    row.set("report", analyses::check_report(p, dir));
    row.set("collapse", analyses::check_collapse(p, dir));
    row.set(
        "diff",
        match baseline {
            // perf diff resolves every process's objects of a system-wide recording
            // (slow), whose other processes' symbols differ as in check 7's known
            // failures: the per-task rows are compared.
            _ if s.args.contains(&"-a") => {
                Outcome::Skip("system-wide recording: compared on per-task rows".into())
            }
            Some(b) => diffs::check_diff(b, p, dir),
            None => Outcome::Skip(format!("no `{DIFF_BASELINE}` recording")),
        },
    );
    if let (scenarios::Workload::Program(prog), true) = (s.workload, s.name == OFF_CPU_ROW) {
        row.set("off-cpu", offcpu::check_off_cpu(p, dir, prog.name));
    }
    row.set("pprof", pprof::check_pprof(p, dir, tools));
    row.set("script", script::check_script(p, dir));
    row.set("annotate", annotate::check_annotate(p, dir));
    row.set("tp-tables", tracepoint::check_tables(p, dir));
    if s.unwinds() {
        let task_32 = matches!(s.workload,
            scenarios::Workload::Program(prog) if prog.lang == programs::Lang::C32);
        row.set(
            "unwind",
            if task_32 {
                // perf 6.1 does not unwind 32-bit tasks: the call graph the program has
                // is the oracle.
                unwind::check_unwind_32(p, dir)
            } else {
                unwind::check_unwind(p, dir)
            },
        );
        row.set("call-graph", unwind::check_call_graph(p, dir));
        row.set("unwound", unwind::check_unwound(p, dir, task_32));
    } else {
        row.set("filters", filters::check_filters(p, dir));
    }
}

/// The row of check 15 (off-CPU time against perf sched timehist).
pub const OFF_CPU_ROW: &str = "off-cpu";

/// The row whose recording is the baseline of check 14 (always recorded).
pub const DIFF_BASELINE: &str = "plain";

/// Is `dep` the inject source of scenario `name`?
fn scenario_needs(name: &str, dep: &str) -> bool {
    scenarios::by_name(name).is_some_and(|s| {
        matches!(s.mode, scenarios::Mode::Inject { from } | scenarios::Mode::InjectPipe { from } if from == dep)
    })
}

/// Decodes a recorded file and runs checks 1-3 live into `row`; returns the decode and
/// perf's views (check 5 compares the variants with them).
fn check_path(p: &Path, row: &mut Row) -> Option<(Decoded, PerfViews)> {
    match ours::load(p) {
        Ok(d) => {
            let plan = ScriptPlan::for_file(&d);
            let views = live_views(p, &plan);
            run_checks(&d, &views, row);
            Some((d, views))
        }
        Err(e) => {
            let o = Outcome::Fail(vec![format!("our decode failed: {e:#}")]);
            for c in ["header", "records", "samples"] {
                row.set(c, o.clone());
            }
            None
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Check 4 of an input (a file or a `--threads` directory): the writer's copy-through and
/// typed rewrites are byte-identical to it. Inputs of [`REWRITE_REFUSED`] are skipped
/// with their reason when the model refuses them.
pub fn rewrite_check(path: &Path) -> Outcome {
    let refused = REWRITE_REFUSED
        .iter()
        .find(|(n, _)| *n == file_name(path))
        .map(|(_, why)| *why);
    let (main, streams) = match ours::read_input(path) {
        Ok(x) => x,
        Err(e) => return Outcome::Fail(vec![format!("{e:#}")]),
    };
    match variants::rewrite(&main, &streams) {
        Ok(r) => checks::check_rewrite(&r),
        Err(e) => match refused {
            Some(why) => Outcome::Skip(format!("{why} ({e})")),
            None => Outcome::Fail(vec![e]),
        },
    }
}

/// Check 5 of an input: its variants (`set`), read by perf, give what the original gives
/// (`views`: perf's views of the original, from checks 1-3). Variants are written into
/// `work`.
pub fn perf_reads_check(
    path: &Path,
    d: &Decoded,
    views: &PerfViews,
    work: &Path,
    set: variants::Variants,
) -> Outcome {
    let (header_limit, records_limit) = perf_limits(d);
    if let Some(why) = records_limit.or(header_limit) {
        return Outcome::Skip(format!("perf 6.1 cannot read the original: {why}"));
    }
    let name = file_name(path);
    if let Some((_, why)) = REWRITE_REFUSED.iter().find(|(n, _)| *n == name) {
        return Outcome::Skip(format!("no rewrite: {why}"));
    }
    let plan = ScriptPlan::for_file(d);
    let text = |v: &Option<Result<String, String>>, what: &str| match v {
        Some(Ok(t)) => Ok(Some(t.clone())),
        Some(Err(e)) => Err(format!("{what} failed on the original: {e}")),
        None => Ok(None),
    };
    let original = match (
        text(&views.dump, "perf report -D"),
        text(&views.script, "perf script"),
        text(&views.trace, "perf script (trace)"),
    ) {
        (Ok(Some(dump)), Ok(script), Ok(trace)) => ReadsView {
            dump,
            script,
            trace,
        },
        (Ok(None), _, _) => return Outcome::Skip("no perf report -D of the original".into()),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Outcome::Skip(e),
    };
    let (main, streams) = match ours::read_input(path) {
        Ok(x) => x,
        Err(e) => return Outcome::Fail(vec![format!("{e:#}")]),
    };
    let mut results = vec![];
    for b in variants::build_set(&main, &streams, work, &name, set) {
        match b {
            Built::Made(v) => {
                let o = read_variant(&v, d, &plan, &original);
                if !o.is_fail() {
                    // Kept when it fails, to look at.
                    let _ = std::fs::remove_file(&v.path);
                }
                results.push((v.kind.name().to_string(), o));
            }
            Built::Skipped(k, why) => results.push((k.name().to_string(), Outcome::Skip(why))),
            Built::Failed(k, why) => {
                results.push((k.name().to_string(), Outcome::Fail(vec![why])));
            }
        }
    }
    checks::combine_variants(&results)
}

/// perf's view of a variant, compared with the original's.
fn read_variant(v: &Variant, d: &Decoded, plan: &ScriptPlan, original: &ReadsView) -> Outcome {
    let swapped = v.swapped;
    if v.layout == Layout::File && v.max_attr_size > PERF_ATTR_SIZE_MAX {
        return Outcome::Skip(format!(
            "attr size {} newer than perf 6.1 (at most {PERF_ATTR_SIZE_MAX}): perf refuses the attrs of a file (a pipe's HEADER_ATTR it reads)",
            v.max_attr_size
        ));
    }
    let run = |args: Vec<String>| record::perf_run(&v.path, &args);
    // perf's error, with its reason when perf gives that only with -v.
    let explain = |r: &record::PerfRun, args: &[String]| {
        let last = r.last_error();
        if !last.contains("rerun with -v") {
            return last;
        }
        let mut verbose = args.to_vec();
        verbose.push("-v".into());
        let why = run(verbose).ok().and_then(|v| {
            v.stderr
                .lines()
                .take_while(|l| !l.contains("rerun with -v"))
                .filter(|l| !l.trim().is_empty())
                .last()
                .map(str::to_string)
        });
        match why {
            Some(w) => format!("{last}: {w}"),
            None => last,
        }
    };
    let mut runs = vec![];
    let mut fails = vec![];
    let mut notes = vec![];
    let mut view = ReadsView::default();
    let mut original = original.clone();
    let mut dump_said = None;
    let dump_args = vec!["report".to_string(), "-D".to_string()];
    match run(dump_args.clone()) {
        // perf report -D exits 0 also when it stops at a record it cannot process.
        Ok(r) if r.ok => {
            dump_said = r
                .stderr
                .lines()
                .find(|l| l.contains("failed"))
                .map(str::to_string);
            view.dump = r.stdout.clone();
            runs.push(r);
        }
        Ok(r) => fails.push(format!(
            "perf report -D failed: {}",
            explain(&r, &dump_args)
        )),
        Err(e) => fails.push(format!("{e:#}")),
    }
    for (trace, args) in [
        (false, (*plan != ScriptPlan::Nothing).then(|| plan.args())),
        (true, plan.trace_args()),
    ] {
        let Some(args) = args else { continue };
        let mut full = vec!["script".to_string()];
        full.extend(args);
        match run(full.clone()) {
            Ok(r) if r.ok => {
                let slot = if trace {
                    &mut view.trace
                } else {
                    &mut view.script
                };
                *slot = Some(r.stdout.clone());
                runs.push(r);
            }
            Ok(r) => {
                // perf says why only with -v.
                let stat_pipe = v.layout == Layout::Pipe
                    && *plan == ScriptPlan::Stat
                    && run(vec!["script".into(), "-v".into()])
                        .is_ok_and(|r| r.stderr.contains("do not have IP attribute set"));
                if stat_pipe {
                    // perf script checks its default fields (ip, sym) against every
                    // pipe-mode HEADER_ATTR that has a sample_type, and refuses; perf stat
                    // record writes sample_type IDENTIFIER in a file (its own pipe output
                    // has 0), and the layout change keeps the attrs as they are.
                    original.script = None;
                    notes.push(
                        "perf script (perf 6.1 refuses a perf stat record pipe whose attrs have a sample_type)"
                            .to_string(),
                    );
                } else {
                    let what = if trace {
                        "perf script (trace)"
                    } else {
                        "perf script"
                    };
                    fails.push(format!("{what} failed: {}", explain(&r, &full)));
                }
                runs.push(r);
            }
            Err(e) => fails.push(format!("{e:#}")),
        }
    }
    if swapped && v.layout == Layout::Pipe {
        // perf 6.1 cannot read a byte-swapped pipe: it has no swap function for
        // PERF_RECORD_HEADER_FEATURE (later perf adds perf_event__header_feature_swap),
        // and perf_event__process_attr never sets evsel->needs_swap, so RAW samples are
        // not un-swapped. When perf fails for exactly those reasons, the variant is a
        // known failure (`known-failures.txt`, tags `perf61-swapped-pipe-feat-id` and
        // `perf61-swapped-pipe-raw`); for any other reason, an unexpected one.
        let raw = d.attrs.iter().any(|a| {
            a.attr
                .sample_type
                .contains(perfdata::types::SampleType::RAW)
        });
        let why = runs.iter().find_map(|r| {
            r.stderr.lines().find_map(|l| {
                let id = l.split("wrong feature ID: ").nth(1)?;
                let id: u64 = id.trim().parse().ok()?;
                (id.swap_bytes() < 256).then(|| {
                    format!("[perf61-swapped-pipe-feat-id] perf 6.1 does not swap HEADER_FEATURE.feat_id of a byte-swapped pipe ({l})")
                })
            })
        });
        let why = why.or_else(|| {
            runs.iter().find_map(|r| {
                let l = r.stderr.lines().find(|l| l.contains("Can't parse sample"))?;
                raw.then(|| {
                    format!("[perf61-swapped-pipe-raw] perf 6.1 does not mark pipe-mode events as byte-swapped, RAW samples do not parse ({l})")
                })
            })
        });
        if let Some(why) = why {
            return Outcome::Fail(vec![why]);
        }
    }
    if !fails.is_empty() {
        fails.extend(dump_said.map(|l| format!("perf report -D on the variant said: {l}")));
        return Outcome::Fail(fails);
    }
    let fields = match plan {
        ScriptPlan::Samples { fields, .. } if swapped && fields.contains(&"iregs") => {
            Some(fields.clone())
        }
        _ => None,
    };
    let norm = ReadsNorm {
        label: v.kind.name().to_string(),
        // Same layout, same framing: the records are where they were.
        offsets: v.offsets_kept,
        hex: !swapped,
        swapped,
        sorted: v.kind == Kind::SingleFile,
        script_fields: fields,
        notes,
        only_original: v.only_original.iter().map(|(i, t)| (*i, t.0)).collect(),
        only_variant: v.only_variant.iter().map(|(i, t)| (*i, t.0)).collect(),
    };
    let mut o = checks::check_variant(&original, &view, &norm);
    if let (Outcome::Fail(lines), Some(l)) = (&mut o, dump_said) {
        lines.push(format!("perf report -D on the variant said: {l}"));
    }
    o
}

/// The corpus rows: check 6, check 4, and checks 1-3 and 5 where perf 6.1 can read the
/// file (variants are written into `work`).
fn corpus_rows(dir: &Path, work: &Path, opts: &LiveOptions) -> Result<Vec<Row>> {
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
        row.set("rewrite", rewrite_check(&f));
        match d {
            None => {
                // Only the expected-error files get here (check 6 fails otherwise).
                for c in ["header", "records", "samples", "perf-reads"] {
                    row.set(c, Outcome::Skip("not a perf.data file".into()));
                }
            }
            Some(d) => {
                // Does perf 6.1 read it at all?
                match record::perf_header(&f) {
                    Err(e) => {
                        let why = format!("perf 6.1 cannot read it: {e:#}");
                        for c in ["header", "records", "samples", "perf-reads"] {
                            row.set(c, Outcome::Skip(why.clone()));
                        }
                    }
                    Ok(_) => {
                        let plan = ScriptPlan::for_file(&d);
                        let views = live_views(&f, &plan);
                        run_checks(&d, &views, &mut row);
                        row.set(
                            "perf-reads",
                            perf_reads_check(&f, &d, &views, work, variants::Variants::All),
                        );
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

/// Checks 1-3 of every committed fixture against perf's stored output, and check 4
/// (check 5 needs the system perf: live only).
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
        row.set("rewrite", rewrite_check(&f));
        row.set("perf-reads", Outcome::Skip(PERF_READS_LIVE_ONLY.into()));
        row.set("corpus", Outcome::Skip("n/a".into()));
        rows.push(row);
    }
    Ok(rows)
}
