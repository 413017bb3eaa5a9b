//! The gperftools CPU profile section of `cargo xtask conformance`: profiles made by the
//! real libprofiler, crafted 32-bit and big-endian profiles, and our conversions from the
//! perf fixtures, each read by both pprof tools (Debian `google-perftools`' perl
//! `google-pprof`, and `go tool pprof` of `golang-go`) and by perf.
//!
//! Rows × checks:
//! * `ours`: our decode (layout, period, records, total samples);
//! * `google-pprof`: `google-pprof --text` gives our total;
//! * `go-pprof`: `go tool pprof -raw` gives our total and our samples per leaf PC (the
//!   leaf is the one frame neither tool adjusts or drops), `-top` our total;
//! * `rewrite`: the typed rewrite is byte-exact, and survives the other byte order;
//! * `perf-reads`: our gperftools→perf.data output, read by `perf report` and `perf
//!   script`, has the profile's total and samples per leaf PC; for a perf fixture, perf's
//!   sample count of the event equals the samples our conversion saw.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use perfdata::gperftools::types::{Header, Record};
use perfdata::gperftools::{self, Profile, SlotFormat, ToPerfOptions};
use perfdata::Recording;
use perfdata_analysis::export::gperftools::{FromPerfOptions, FromPerfSummary};

use crate::checks::Outcome;
use crate::record::perf_run;

/// Column names, in order.
pub const CHECKS: [&str; 5] = ["ours", "google-pprof", "go-pprof", "rewrite", "perf-reads"];

/// One row of the section.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    pub cells: Vec<Outcome>,
}

impl Row {
    fn new(name: impl Into<String>) -> Row {
        Row {
            name: name.into(),
            cells: vec![Outcome::Skip("n/a".into()); CHECKS.len()],
        }
    }
    fn set(&mut self, check: &str, o: Outcome) {
        let i = CHECKS
            .iter()
            .position(|c| *c == check)
            .expect("known check");
        self.cells[i] = o;
    }
}

/// Programs profiled with the real libprofiler: several distinct callers each, so that
/// Go's signal-frame heuristic has nothing to drop.
const PROGRAMS: &[(&str, &str)] = &[
    (
        "gperftools-single",
        r#"
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long leaf_a(unsigned long n) {
  unsigned long s = 0; for (unsigned long i = 0; i < n; i++) s += i * i ^ (s >> 3); return s; }
__attribute__((noinline)) static unsigned long leaf_b(unsigned long n) {
  unsigned long s = 1; for (unsigned long i = 0; i < n; i++) s = s * 31 + i; return s; }
__attribute__((noinline)) static void mid_a(int k) { sink += leaf_a(20000 + k); }
__attribute__((noinline)) static void mid_b(int k) { sink += leaf_b(30000 + k); sink += leaf_a(3000); }
int main(void) {
  for (long i = 0; i < 9000; i++) { if (i % 3) mid_a(i & 7); else mid_b(i & 7); }
  printf("%lu\n", sink);
  return 0;
}
"#,
    ),
    (
        "gperftools-threads",
        r#"
#include <pthread.h>
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long spin(unsigned long n, unsigned long m) {
  unsigned long s = m; for (unsigned long i = 0; i < n; i++) s = s * 33 + (i ^ m); return s; }
__attribute__((noinline)) static void *worker_a(void *arg) {
  for (int i = 0; i < 4000; i++) sink += spin(20000 + (i & 7), 1); return arg; }
__attribute__((noinline)) static void *worker_b(void *arg) {
  for (int i = 0; i < 4000; i++) sink += spin(20000 + (i & 7), 2); return arg; }
__attribute__((noinline)) static void *worker_c(void *arg) {
  for (int i = 0; i < 4000; i++) sink += spin(20000 + (i & 7), 3); return arg; }
int main(void) {
  pthread_t t[3];
  pthread_create(&t[0], 0, worker_a, 0);
  pthread_create(&t[1], 0, worker_b, 0);
  pthread_create(&t[2], 0, worker_c, 0);
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  printf("%lu\n", sink);
  return 0;
}
"#,
    ),
    (
        "gperftools-recursion",
        r#"
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long work(unsigned long n) {
  unsigned long s = 0; for (unsigned long i = 0; i < n; i++) s += i ^ (s << 1); return s; }
__attribute__((noinline)) static unsigned long down(int depth, int k) {
  if (depth == 0) return work(20000 + k);
  unsigned long r = down(depth - 1, k);
  sink += r;
  return r + 1;
}
int main(void) {
  /* Depths up to 150: deeper than the profiler's 64-frame limit. */
  for (long i = 0; i < 9000; i++) sink += down(20 + (int)(i % 7) * 20, (int)(i & 7));
  printf("%lu\n", sink);
  return 0;
}
"#,
    ),
];

/// perf fixtures converted to profiles (with callchains or user IPs; one with several
/// events, one with a non-time event, one in pipe layout).
const FIXTURES: &[&str] = &[
    "callchain.data",
    "threads.data",
    "period.data",
    "page-faults.data",
    "multi-event.data",
    "group-read.data",
    "pipe-callchain.pipe.data",
];

/// The tools, found once; `Err` says why a column is skipped.
pub(crate) struct Tools {
    gcc: Result<(), String>,
    google_pprof: Result<(), String>,
    /// `go` (for `go tool pprof`), or why not.
    pub(crate) go: Result<(), String>,
    perf: Result<(), String>,
    /// HOME, GOCACHE, PPROF_TMPDIR… under the work directory: no network, no writes
    /// outside it.
    env: Vec<(String, PathBuf)>,
}

fn runs(cmd: &str, args: &[&str], install: &str) -> Result<(), String> {
    match Command::new(cmd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => Ok(()),
        Err(_) => Err(format!("`{cmd}` not installed ({install})")),
    }
}

impl Tools {
    pub(crate) fn find(work: &Path) -> Tools {
        let env: Vec<(String, PathBuf)> = ["HOME", "GOCACHE", "PPROF_TMPDIR", "GOPATH"]
            .iter()
            .map(|v| (v.to_string(), work.join(format!("gp-{}", v.to_lowercase()))))
            .collect();
        for (_, d) in &env {
            let _ = std::fs::create_dir_all(d);
        }
        Tools {
            gcc: runs("gcc", &["--version"], "apt-get install gcc"),
            google_pprof: runs(
                "google-pprof",
                &["--version"],
                "apt-get install google-perftools",
            ),
            go: runs("go", &["version"], "apt-get install golang-go"),
            perf: runs("perf", &["--version"], "apt-get install linux-perf"),
            env,
        }
    }

    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.env("GOPROXY", "off")
            .env("GOTOOLCHAIN", "local")
            .env("GOFLAGS", "")
            .stdin(Stdio::null());
        c
    }

    /// stdout of `program args`, or an error with its stderr.
    pub(crate) fn output(&self, program: &str, args: &[&std::ffi::OsStr]) -> Result<String> {
        let out = self
            .cmd(program)
            .args(args)
            .output()
            .with_context(|| format!("running {program}"))?;
        if !out.status.success() {
            bail!(
                "{program} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// Runs the section; the table rows. Rows are independent: two run at a time (most of
/// the time is spent waiting for the perl pprof and perf).
pub fn run(workspace: &Path, work: &Path) -> Vec<Row> {
    let tools = Tools::find(work);
    let fixtures = crate::fixtures_dir(workspace);
    type Job<'t> = Box<dyn Fn() -> Row + Send + Sync + 't>;
    let mut jobs: Vec<Job<'_>> = vec![];
    let tools = &tools;
    for (name, source) in PROGRAMS {
        jobs.push(Box::new(move || {
            let mut row = Row::new(*name);
            match make_profile(tools, work, name, source) {
                Err(why) => {
                    for c in CHECKS {
                        row.set(c, Outcome::Skip(why.clone()));
                    }
                }
                Ok((bin, path)) => check_profile(tools, &mut row, &path, Some(&bin), work),
            }
            row
        }));
    }
    for layout in [SlotFormat::B32_LE, SlotFormat::B32_BE, SlotFormat::B64_BE] {
        jobs.push(Box::new(move || {
            let name = format!(
                "crafted-{}{}",
                u32::from(layout.word_size) * 8,
                match layout.endian {
                    perfdata::rt::Endianness::Little => "le",
                    perfdata::rt::Endianness::Big => "be",
                }
            );
            let mut row = Row::new(&name);
            let path = work.join(format!("{name}.prof"));
            match crafted().encode(layout) {
                Ok(bytes) => match std::fs::write(&path, bytes) {
                    Ok(()) => check_profile(tools, &mut row, &path, None, work),
                    Err(e) => row.set("ours", Outcome::Fail(vec![e.to_string()])),
                },
                Err(e) => row.set("ours", Outcome::Fail(vec![e.to_string()])),
            }
            row
        }));
    }
    for f in FIXTURES {
        let fixtures = &fixtures;
        jobs.push(Box::new(move || {
            let mut row = Row::new(format!("perf→gperftools {f}"));
            check_fixture(tools, &mut row, &fixtures.join(f), work);
            row
        }));
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<(usize, Row)>> = std::sync::Mutex::new(vec![]);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let row = job();
                done.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((i, row));
            });
        }
    });
    let mut rows = done.into_inner().unwrap_or_else(|e| e.into_inner());
    rows.sort_by_key(|(i, _)| *i);
    rows.into_iter().map(|(_, r)| r).collect()
}

/// A profile with three distinct callers, addresses below 4 GiB (fits 32-bit words).
fn crafted() -> Profile {
    let rec = |count, pcs: &[u64]| Record {
        count,
        pcs: pcs.to_vec(),
    };
    Profile {
        layout: SlotFormat::B32_LE,
        header: Header {
            period_us: 1000,
            ..Header::default()
        },
        records: vec![
            rec(5, &[0x804_8010, 0x804_8120, 0x804_8230]),
            rec(2, &[0x804_8050, 0x804_8140, 0x804_8230]),
            rec(7, &[0x804_8090, 0x804_8230]),
            rec(3, &[0x804_8010, 0x804_8120, 0x804_8230]),
        ],
        map_text: b"08048000-08049000 r-xp 00000000 00:00 0           /nonexistent/prog\n".to_vec(),
    }
}

/// Builds `source` with `-lprofiler` and runs it under the profiler.
fn make_profile(
    tools: &Tools,
    work: &Path,
    name: &str,
    source: &str,
) -> Result<(PathBuf, PathBuf), String> {
    tools.gcc.clone()?;
    let src = work.join(format!("{name}.c"));
    let bin = work.join(name);
    let prof = work.join(format!("{name}.prof"));
    std::fs::write(&src, source).map_err(|e| e.to_string())?;
    let built = tools
        .cmd("gcc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-pthread", "-o"])
        .arg(&bin)
        .arg(&src)
        .args(["-Wl,--no-as-needed", "-lprofiler"])
        .output()
        .map_err(|e| e.to_string())?;
    if !built.status.success() {
        return Err(format!(
            "cannot link with -lprofiler (apt-get install libgoogle-perftools-dev): {}",
            String::from_utf8_lossy(&built.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    let ran = tools
        .cmd(bin.to_str().ok_or("path")?)
        .env("CPUPROFILE", &prof)
        .env("CPUPROFILE_FREQUENCY", "4000")
        .output()
        .map_err(|e| e.to_string())?;
    if !ran.status.success() || !prof.exists() {
        return Err(format!(
            "the profiled program failed: {}",
            String::from_utf8_lossy(&ran.stderr).trim()
        ));
    }
    Ok((bin, prof))
}

/// Samples per leaf PC.
fn leaves(p: &Profile) -> BTreeMap<u64, u64> {
    let mut m = BTreeMap::new();
    for r in &p.records {
        if let Some(&leaf) = r.pcs.first() {
            *m.entry(leaf).or_default() += r.count;
        }
    }
    m
}

fn compare_leaves(
    what: &str,
    ours: &BTreeMap<u64, u64>,
    theirs: &BTreeMap<u64, u64>,
) -> Vec<String> {
    let mut problems = vec![];
    for (pc, n) in ours {
        let t = theirs.get(pc).copied().unwrap_or(0);
        if t != *n {
            problems.push(format!("leaf {pc:#x}: ours {n}, {what} {t}"));
        }
    }
    for (pc, t) in theirs {
        if !ours.contains_key(pc) {
            problems.push(format!("leaf {pc:#x}: ours 0, {what} {t}"));
        }
    }
    problems.truncate(crate::checks::SHOW);
    problems
}

fn check_profile(tools: &Tools, row: &mut Row, path: &Path, bin: Option<&Path>, work: &Path) {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return row.set("ours", Outcome::Fail(vec![e.to_string()])),
    };
    let p = match Profile::parse(&bytes) {
        Ok(p) => p,
        Err(e) => return row.set("ours", Outcome::Fail(vec![e.to_string()])),
    };
    let total = p.total_samples();
    row.set(
        "ours",
        if total > 0 && p.records.iter().all(|r| !r.pcs.is_empty()) {
            Outcome::Pass(format!(
                "{}, period {} us, {} records, {total} samples",
                p.layout.describe(),
                p.period_us(),
                p.records.len()
            ))
        } else {
            Outcome::Fail(vec![format!(
                "{total} samples in {} records",
                p.records.len()
            )])
        },
    );
    let ours_leaves = leaves(&p);
    row.set("google-pprof", google_pprof_total(tools, path, bin, total));
    row.set("go-pprof", go_pprof(tools, path, bin, total, &ours_leaves));
    row.set("rewrite", rewrite(&p, &bytes));
    row.set(
        "perf-reads",
        perf_reads_profile(tools, &p, path, bin, work, &ours_leaves),
    );
}

fn google_pprof_total(tools: &Tools, path: &Path, bin: Option<&Path>, total: u64) -> Outcome {
    if let Err(why) = &tools.google_pprof {
        return Outcome::Skip(why.clone());
    }
    // It wants a program; with none, any binary serves for totals.
    let program = bin.unwrap_or(Path::new("/bin/true"));
    match tools.output(
        "google-pprof",
        &["--text".as_ref(), program.as_os_str(), path.as_os_str()],
    ) {
        Err(e) => Outcome::Fail(vec![e.to_string()]),
        Ok(text) => match text.lines().find_map(|l| {
            l.strip_prefix("Total: ")?
                .strip_suffix(" samples")?
                .parse::<u64>()
                .ok()
        }) {
            Some(t) if t == total => Outcome::Pass(format!("--text total {t} samples")),
            Some(t) => Outcome::Fail(vec![format!("--text total {t}, ours {total}")]),
            None if total == 0 => Outcome::Pass("empty profile read".into()),
            None => Outcome::Fail(vec![format!(
                "no `Total:` line in --text output: {text:.200}"
            )]),
        },
    }
}

/// `go tool pprof -raw`: (samples per leaf address, total).
fn parse_go_raw(text: &str) -> Result<(BTreeMap<u64, u64>, u64), String> {
    let mut samples: Vec<(u64, u64)> = vec![]; // (count, first location id)
    let mut locations: BTreeMap<u64, u64> = BTreeMap::new();
    let mut section = "";
    for line in text.lines() {
        match line.trim_end() {
            "Samples:" => section = "samples",
            "Locations" => section = "locations",
            "Mappings" => section = "mappings",
            l if section == "samples" => {
                let Some((count, rest)) = l.trim().split_once(' ') else {
                    continue;
                };
                let Ok(count) = count.parse::<u64>() else {
                    continue; // the `samples/count cpu/nanoseconds` line
                };
                let ids = rest.split_once(':').map_or("", |(_, ids)| ids);
                let first = ids
                    .split_whitespace()
                    .next()
                    .and_then(|i| i.parse().ok())
                    .ok_or_else(|| format!("sample without locations: {l}"))?;
                samples.push((count, first));
            }
            l if section == "locations" => {
                // `     1: 0x55f7e2961169 M=1 leaf_a …` (inlined frames follow indented).
                if let Some((id, rest)) = l.trim_start().split_once(": 0x") {
                    if let (Ok(id), Some(addr)) = (
                        id.parse::<u64>(),
                        rest.split_whitespace()
                            .next()
                            .and_then(|a| u64::from_str_radix(a, 16).ok()),
                    ) {
                        locations.insert(id, addr);
                    }
                }
            }
            _ => {}
        }
    }
    let mut by_leaf = BTreeMap::new();
    let mut total = 0;
    for (count, id) in samples {
        let addr = locations
            .get(&id)
            .ok_or_else(|| format!("location {id} not listed"))?;
        *by_leaf.entry(*addr).or_default() += count;
        total += count;
    }
    Ok((by_leaf, total))
}

fn go_pprof(
    tools: &Tools,
    path: &Path,
    bin: Option<&Path>,
    total: u64,
    ours: &BTreeMap<u64, u64>,
) -> Outcome {
    if let Err(why) = &tools.go {
        return Outcome::Skip(why.clone());
    }
    let mut args: Vec<&std::ffi::OsStr> = vec!["tool".as_ref(), "pprof".as_ref(), "-raw".as_ref()];
    args.extend(bin.map(Path::as_os_str));
    args.push(path.as_os_str());
    let raw = match tools.output("go", &args) {
        Ok(t) => t,
        Err(e) => return Outcome::Fail(vec![e.to_string()]),
    };
    let (theirs, go_total) = match parse_go_raw(&raw) {
        Ok(x) => x,
        Err(e) => return Outcome::Fail(vec![e]),
    };
    let mut problems = compare_leaves("go -raw", ours, &theirs);
    if go_total != total {
        problems.insert(0, format!("-raw total {go_total}, ours {total}"));
    }
    // -top in samples: "Showing nodes accounting for N, 100% of N total".
    args[2] = "-top".as_ref();
    args.insert(3, "-sample_index=samples".as_ref());
    match tools.output("go", &args) {
        Err(e) => problems.push(e.to_string()),
        Ok(top) => {
            let t = top.lines().find_map(|l| {
                let (_, rest) = l.split_once("% of ")?;
                rest.strip_suffix(" total")?.parse::<u64>().ok()
            });
            match t {
                Some(t) if t == total => {}
                None if total == 0 => {}
                other => problems.push(format!("-top total {other:?}, ours {total}")),
            }
        }
    }
    if problems.is_empty() {
        Outcome::Pass(format!(
            "-raw and -top total {total}; {} leaf PCs agree",
            ours.len()
        ))
    } else {
        Outcome::Fail(problems)
    }
}

fn rewrite(p: &Profile, bytes: &[u8]) -> Outcome {
    let mut problems = vec![];
    match p.encode(p.layout) {
        Ok(b) if b == bytes => {}
        Ok(b) => problems.push(format!(
            "typed rewrite differs ({} bytes, input {})",
            b.len(),
            bytes.len()
        )),
        Err(e) => problems.push(e.to_string()),
    }
    let other = SlotFormat::new(p.layout.word_size, p.layout.endian.swapped());
    match p
        .encode(other)
        .and_then(|b| Profile::parse(&b))
        .and_then(|q| q.encode(p.layout))
    {
        Ok(b) if b == bytes => {}
        Ok(_) => problems.push("through the other byte order: bytes differ".into()),
        Err(e) => problems.push(format!("through the other byte order: {e}")),
    }
    if problems.is_empty() {
        Outcome::Pass(format!(
            "{} bytes identical, also through the other byte order",
            bytes.len()
        ))
    } else {
        Outcome::Fail(problems)
    }
}

/// Samples per leaf IP as `perf script -F ip -G` prints them, and perf report's count.
fn perf_leaves(path: &Path) -> Result<(BTreeMap<u64, u64>, Option<u64>), String> {
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let script = perf_run(path, &args(&["script", "-F", "ip", "-G"])).map_err(|e| e.to_string())?;
    if !script.ok {
        return Err(format!("perf script: {}", script.last_error()));
    }
    let mut m = BTreeMap::new();
    for l in script.stdout.lines().filter(|l| !l.trim().is_empty()) {
        let ip =
            u64::from_str_radix(l.trim(), 16).map_err(|_| format!("perf script line {l:?}"))?;
        *m.entry(ip).or_default() += 1;
    }
    let report = perf_run(path, &args(&["report", "--stdio", "--sort", "comm"]))
        .map_err(|e| e.to_string())?;
    if !report.ok {
        return Err(format!("perf report: {}", report.last_error()));
    }
    let n = report.stdout.lines().find_map(|l| {
        l.strip_prefix("# Samples: ")?
            .split_whitespace()
            .next()?
            .parse::<u64>()
            .ok()
    });
    Ok((m, n))
}

fn perf_reads_profile(
    tools: &Tools,
    p: &Profile,
    path: &Path,
    bin: Option<&Path>,
    work: &Path,
    ours: &BTreeMap<u64, u64>,
) -> Outcome {
    if let Err(why) = &tools.perf {
        return Outcome::Skip(why.clone());
    }
    let out = work.join(format!(
        "{}.perf.data",
        path.file_stem().unwrap_or_default().to_string_lossy()
    ));
    let written = gperftools::to_perf(p, &ToPerfOptions::default())
        .and_then(|f| f.save(&out, perfdata::write::WriteOptions::default()));
    if let Err(e) = written {
        return Outcome::Fail(vec![format!("gperftools → perf.data: {e}")]);
    }
    let (theirs, reported) = match perf_leaves(&out) {
        Ok(x) => x,
        Err(e) => return Outcome::Fail(vec![e]),
    };
    let total = p.total_samples();
    let mut problems = compare_leaves("perf script", ours, &theirs);
    if reported != Some(total) {
        problems.insert(
            0,
            format!("perf report: {reported:?} samples, ours {total}"),
        );
    }
    // With the program at hand: perf report's samples per function (self) on our
    // perf.data equal go tool pprof's flat samples per function on the profile.
    let mut functions = String::new();
    if let (Some(bin), Ok(())) = (bin, &tools.go) {
        match top_functions(tools, bin, path, &out) {
            Ok(n) => functions = format!("; {n} functions' self samples equal go -top's"),
            Err(e) => problems.extend(e),
        }
    }
    if problems.is_empty() {
        Outcome::Pass(format!(
            "perf report {total} samples; perf script: {} leaf IPs agree{functions}",
            ours.len()
        ))
    } else {
        Outcome::Fail(problems)
    }
}

/// Self samples per function of the profiled program: `go tool pprof -top` on the profile
/// against `perf report --no-children --sort dso,sym -n` on our perf.data. Only the
/// program's own functions are compared: given the program alone, pprof names a sample in
/// a shared library `[libc.so.6]`, where perf names the library's function (the totals,
/// which include them, are compared by the other checks). Returns how many agree.
fn top_functions(
    tools: &Tools,
    bin: &Path,
    prof: &Path,
    perf_data: &Path,
) -> Result<usize, Vec<String>> {
    let top = tools
        .output(
            "go",
            &[
                "tool".as_ref(),
                "pprof".as_ref(),
                "-top".as_ref(),
                "-sample_index=samples".as_ref(),
                bin.as_os_str(),
                prof.as_os_str(),
            ],
        )
        .map_err(|e| vec![e.to_string()])?;
    // `        75 59.06% 59.06%         75 59.06%  leaf_a`
    let mut go: BTreeMap<String, u64> = BTreeMap::new();
    for l in top.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() == 6 && f[1].ends_with('%') && f[4].ends_with('%') {
            if let Ok(n) = f[0].parse::<u64>() {
                if n > 0 && !f[5].starts_with('[') {
                    go.insert(f[5].to_string(), n);
                }
            }
        }
    }
    let args: Vec<String> = [
        "report",
        "--stdio",
        "--no-children",
        "--sort",
        "dso,sym",
        "-n",
        "-q",
        "-g",
        "none",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let report = perf_run(perf_data, &args).map_err(|e| vec![e.to_string()])?;
    if !report.ok {
        return Err(vec![format!(
            "perf report --sort dso,sym: {}",
            report.last_error()
        )]);
    }
    // `    59.06%            75  prog  [.] leaf_a`
    let program = bin
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut perf: BTreeMap<String, u64> = BTreeMap::new();
    for l in report.stdout.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() >= 5 && f[0].ends_with('%') && f[2] == program && f[3] == "[.]" {
            if let Ok(n) = f[1].parse::<u64>() {
                *perf.entry(f[4..].join(" ")).or_default() += n;
            }
        }
    }
    if go.is_empty() {
        return Err(vec![
            "go tool pprof -top listed no function with samples".into()
        ]);
    }
    if go == perf {
        Ok(go.len())
    } else {
        Err(vec![format!(
            "self samples per function: go -top {go:?}, perf report {perf:?}"
        )])
    }
}

fn check_fixture(tools: &Tools, row: &mut Row, fixture: &Path, work: &Path) {
    if !fixture.exists() {
        row.set(
            "ours",
            Outcome::Skip(format!("{} is missing", fixture.display())),
        );
        return;
    }
    // One address space: the process with the most samples (pprof merges locations by
    // mapped file, so several processes' stacks in one profile would be ambiguous).
    let converted = (|| -> Result<_, perfdata_analysis::AnalysisError> {
        let r = Recording::open(fixture)?;
        let from = |opts: &FromPerfOptions| {
            let mut a = perfdata_analysis::Analyzer::open(
                &r,
                &perfdata_analysis::AnalyzerOptions::default(),
            )?;
            perfdata_analysis::export::gperftools::from_perf(&mut a, opts)
        };
        let (p, summary) = from(&FromPerfOptions::default())?;
        match summary.pids.iter().max_by_key(|(_, n)| **n) {
            Some((&pid, _)) if summary.pids.len() > 1 => {
                let opts = FromPerfOptions {
                    pid: Some(pid),
                    ..FromPerfOptions::default()
                };
                from(&opts).map(|(p, s)| (p, s, Some(pid)))
            }
            _ => Ok((p, summary, None)),
        }
    })();
    let (p, summary, pid) = match converted {
        Ok(x) => x,
        Err(e) => return row.set("ours", Outcome::Fail(vec![e.to_string()])),
    };
    let path = work.join(format!(
        "{}.prof",
        fixture.file_name().unwrap_or_default().to_string_lossy()
    ));
    if let Err(e) = gperftools::save(&p, &path, p.layout) {
        return row.set("ours", Outcome::Fail(vec![e.to_string()]));
    }
    let total = p.total_samples();
    row.set(
        "ours",
        if total + summary.without_user_frames == summary.samples && total > 0 {
            Outcome::Pass(format!(
                "{} samples of {}{} → {} stacks, {total} samples ({} kernel-only left out)",
                summary.samples,
                summary.event,
                pid.map_or(String::new(), |p| format!(" in pid {p}")),
                summary.stacks,
                summary.without_user_frames
            ))
        } else {
            Outcome::Fail(vec![format!("{summary:?}, profile total {total}")])
        },
    );
    // pprof symbolizes with the program: the sampled process's binary when it is here.
    let bin = p
        .mappings()
        .into_iter()
        .find(|m| m.perms.contains('x') && m.path.starts_with('/') && Path::new(&m.path).exists())
        .map(|m| PathBuf::from(m.path));
    let ours = leaves(&p);
    row.set(
        "google-pprof",
        google_pprof_total(tools, &path, bin.as_deref(), total),
    );
    row.set(
        "go-pprof",
        go_pprof(tools, &path, bin.as_deref(), total, &ours),
    );
    match std::fs::read(&path) {
        Ok(bytes) => row.set("rewrite", rewrite(&p, &bytes)),
        Err(e) => row.set("rewrite", Outcome::Fail(vec![e.to_string()])),
    }
    row.set(
        "perf-reads",
        perf_sample_count(tools, fixture, &summary, pid),
    );
}

/// perf's sample count of the converted event (in the selected process) equals what
/// the conversion saw: `perf script -F pid,event -G [--pid N]`, one line per sample.
fn perf_sample_count(
    tools: &Tools,
    fixture: &Path,
    summary: &FromPerfSummary,
    pid: Option<u32>,
) -> Outcome {
    if let Err(why) = &tools.perf {
        return Outcome::Skip(why.clone());
    }
    let mut args: Vec<String> = ["script", "-F", "pid,event", "-G"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(pid.map(|p| format!("--pid={p}")));
    let script = match perf_run(fixture, &args) {
        Ok(r) if r.ok => r.stdout,
        Ok(r) => return Outcome::Fail(vec![format!("perf script: {}", r.last_error())]),
        Err(e) => return Outcome::Fail(vec![e.to_string()]),
    };
    let mut per_event: BTreeMap<String, u64> = BTreeMap::new();
    for l in script.lines().filter(|l| !l.trim().is_empty()) {
        let ev = l
            .split_whitespace()
            .nth(1)
            .unwrap_or("")
            .trim_end_matches(':');
        *per_event.entry(ev.to_string()).or_default() += 1;
    }
    // The converted event by name; a file without event names has one event.
    let n = match per_event.get(&summary.event) {
        Some(n) => *n,
        None if per_event.len() == 1 => per_event.values().sum(),
        None => {
            return Outcome::Fail(vec![format!(
                "perf script has no samples of {} (events: {per_event:?})",
                summary.event
            )])
        }
    };
    if n == summary.samples {
        Outcome::Pass(format!(
            "perf script: {n} samples of {}{}, as converted",
            summary.event,
            pid.map_or(String::new(), |p| format!(" in pid {p}"))
        ))
    } else {
        Outcome::Fail(vec![format!(
            "perf script: {n} samples of {}; the conversion saw {}",
            summary.event, summary.samples
        )])
    }
}

/// The section's table, with failure details (and, `verbose`, what passed) under it.
pub fn render(rows: &[Row], verbose: bool) -> String {
    let mut table = vec![{
        let mut h = vec!["gperftools".to_string()];
        h.extend(CHECKS.iter().map(|c| c.to_string()));
        h
    }];
    let mut legend: Vec<String> = vec![];
    for r in rows {
        let mut line = vec![r.name.clone()];
        for o in &r.cells {
            line.push(match o {
                Outcome::Skip(why) if why == "n/a" => "-".to_string(),
                Outcome::Skip(why) => {
                    let n = legend.iter().position(|l| l == why).unwrap_or_else(|| {
                        legend.push(why.clone());
                        legend.len() - 1
                    });
                    format!("skip[{}]", n + 1)
                }
                other => other.cell(),
            });
        }
        table.push(line);
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|i| {
            table
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (n, line) in table.iter().enumerate() {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join(" | ").trim_end());
        out.push('\n');
        if n == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            out.push_str(&rule.join("-|-"));
            out.push('\n');
        }
    }
    for (n, why) in legend.iter().enumerate() {
        out.push_str(&format!("skip[{}]: {why}\n", n + 1));
    }
    for r in rows {
        for (c, o) in CHECKS.iter().zip(&r.cells) {
            match o {
                Outcome::Fail(lines) => {
                    out.push_str(&format!("{} / {c}: FAIL\n", r.name));
                    for l in lines {
                        out.push_str(&format!("    {l}\n"));
                    }
                }
                Outcome::Pass(what) if verbose => {
                    out.push_str(&format!("{} / {c}: pass: {what}\n", r.name));
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_raw_output_is_summed_per_leaf() {
        let text = "PeriodType: cpu nanoseconds\nPeriod: 250000\nSamples:\n\
                    samples/count cpu/nanoseconds\n         22    5500000: 1 2 3 \n\
                    \x20         3     750000: 4 2 3 \n          1     250000: 1 3 \n\
                    Locations\n     1: 0x55f7e2961169 M=1 leaf_a /tmp/x.c:4 s=0\n\
                    \x20    2: 0x55f7e29611c0 M=1 mid_a /tmp/x.c:6 s=0\n\
                    \x20            inlined_into_mid_a /tmp/x.c:7 s=0\n\
                    \x20    3: 0x55f7e29612be M=1 main /tmp/x.c:10 s=0\n\
                    \x20    4: 0x55f7e296119b M=1 \nMappings\n1: 0x0/0x1000/0x0 /tmp/x  [FN]\n";
        let (leaves, total) = parse_go_raw(text).unwrap();
        assert_eq!(total, 26);
        assert_eq!(leaves[&0x55f7e2961169], 23);
        assert_eq!(leaves[&0x55f7e296119b], 3);
        assert_eq!(leaves.len(), 2);
    }

    #[test]
    fn the_crafted_profile_fits_32_bits() {
        for l in SlotFormat::ALL {
            let b = crafted().encode(l).unwrap();
            assert_eq!(Profile::parse(&b).unwrap().total_samples(), 17);
        }
    }
}
