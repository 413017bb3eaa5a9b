//! The `perf sched` table of the full bench (issue 40): a busy system-wide `perf sched
//! record` — the conformance suite's scheduler workloads
//! (`conformance/programs/sched_workloads.c`: a mutex ping-pong and a pipe between two
//! processes) looping on every CPU — of at least `--sched-mb` MB (300 by default), cached
//! in `target/bench/`, read by `perf sched timehist`/`latency` and by `perfdata sched`.
//! A small recording of the same load shows that our peak memory follows the tasks, not
//! the events.

use super::runner::{check_status, measure_rounds, Env, Measured, Workload};
use super::table::{render, Row, Speed};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = include_str!("../../../conformance/programs/sched_workloads.c");
/// Seconds of the calibration recording.
const CALIBRATION_SECONDS: f64 = 2.0;
/// Seconds of the small recording (a few MB on two CPUs).
const SMALL_SECONDS: f64 = 0.05;

/// The table, and what it was measured on.
pub(super) struct SchedTable {
    pub(super) markdown: String,
    pub(super) input: String,
}

/// Records (or reuses) the recordings and measures the rows: `runs` runs of each
/// workload on a recording of about `mb` MB.
pub(super) fn measure(env: &Env, mb: u64, runs: usize) -> Result<SchedTable> {
    if !env.perf {
        bail!("the sched table needs the system perf (to record its input, and as the peer)");
    }
    let dir = build(env)?;
    let big = env.scratch.join(format!("sched-{mb}mb.data"));
    let small = env.scratch.join("sched-small.data");
    if !big.exists() {
        record_sized(&dir, mb, &big, SCHED_RECORD)?;
    }
    if !small.exists() {
        record(&dir, SMALL_SECONDS, &small, SCHED_RECORD)?;
    }
    let file = big.to_str().context("input path is not UTF-8")?;
    let small_file = small.to_str().context("input path is not UTF-8")?;
    let perfdata = |args: &[&str]| Workload::new(&env.perfdata_bin, args);
    let perf = |args: &[&str]| Workload::new(Path::new("perf"), args);
    let workloads: Vec<(&'static str, Workload)> = vec![
        ("timehist", perfdata(&["sched", "timehist", file])),
        ("timehist-s", perfdata(&["sched", "timehist", "-s", file])),
        ("latency", perfdata(&["sched", "latency", file])),
        ("latency-small", perfdata(&["sched", "latency", small_file])),
        (
            "timehist-small",
            perfdata(&["sched", "timehist", small_file]),
        ),
        ("perf-timehist", perf(&["sched", "timehist", "-i", file])),
        (
            "perf-timehist-s",
            perf(&["sched", "timehist", "-s", "-i", file]),
        ),
        ("perf-latency", perf(&["sched", "latency", "-i", file])),
        // The floor under the rows: the recording read in time order (as the views
        // must: a wakeup on one CPU and the switch on another are one story) with
        // nothing else done, in the file's order, and its bytes merely scanned.
        (
            "walk-ordered",
            Workload::new(&env.bench_bin, &["ours", file, "--ordered"]),
        ),
        ("walk-file", Workload::new(&env.bench_bin, &["ours", file])),
        ("scan", Workload::new(&env.bench_bin, &["scan", file])),
    ];
    println!("measuring the sched table ({runs} run(s) each, median)");
    let results = measure_rounds(env, &workloads, runs)?;
    let input_bytes = std::fs::metadata(&big)?.len();
    let rows = vec![
        Row::new(
            "`perfdata sched timehist` vs `perf sched timehist`",
            "timehist",
        )
        .peer("perf-timehist", Speed::FasterThanPeer(10.0))
        .decode(),
        Row::new(
            "`perfdata sched timehist -s` vs `perf sched timehist -s`",
            "timehist-s",
        )
        .peer("perf-timehist-s", Speed::FasterThanPeer(10.0))
        .decode(),
        Row::new(
            "`perfdata sched latency` vs `perf sched latency`",
            "latency",
        )
        .peer("perf-latency", Speed::FasterThanPeer(10.0))
        .decode(),
        Row::new(
            "`perfdata sched timehist` on the small recording",
            "timehist-small",
        ),
        Row::new(
            "`perfdata sched latency` on the small recording",
            "latency-small",
        ),
    ];
    let samples = super::runner::sample_count(env, &big)?;
    let mut md = render(&rows, &results, input_bytes, samples)?;
    let small_bytes = std::fs::metadata(&small)?.len();
    let anon = |k: &str| results[k].max_anon_kib as f64 / 1024.0;
    writeln!(
        md,
        "\nPeak anonymous memory of `sched latency`: {:.1} MiB on the {:.0} MB recording, \
         {:.1} MiB on the {:.1} MB one of the same load (per task and CPU; the events \
         stream through). samples/s counts every sample of the recording.",
        anon("latency"),
        input_bytes as f64 / 1e6,
        anon("latency-small"),
        small_bytes as f64 / 1e6,
    )?;
    write_floor(&mut md, &results)?;
    Ok(SchedTable {
        markdown: md,
        input: format!(
            "{:.1} MB, {samples} samples: `perf sched record` of the whole machine while \
             `sched_workloads.c`'s ping-pong and pipe loop on every CPU",
            input_bytes as f64 / 1e6
        ),
    })
}

/// The floor under the rows: what reading the recording costs with no view made, against
/// what 10× perf leaves each view, in wall time and in CPU time on this machine's cores.
fn write_floor(md: &mut String, results: &HashMap<&str, Measured>) -> Result<()> {
    let wall = |k: &str| results[k].wall.as_secs_f64();
    let cpu = |k: &str| results[k].cpu.as_secs_f64();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ordered = wall("walk-ordered");
    writeln!(
        md,
        "\nThe floor under these rows, on the same file: reading it in time order with \
         nothing else done (`perfdata-bench ours FILE --ordered`: each sample's ip, time and \
         callchain, no tracepoint field, no view) takes {ordered:.3} s ({:.3} s of CPU); in the \
         file's order {:.3} s ({:.3} s of CPU); a scan of its mapped bytes {:.3} s. \
         The views need the time order: a task woken on one CPU runs on another.",
        cpu("walk-ordered"),
        wall("walk-file"),
        cpu("walk-file"),
        wall("scan"),
    )?;
    let views = [
        ("timehist", "timehist", "perf-timehist"),
        ("timehist -s", "timehist-s", "perf-timehist-s"),
        ("latency", "latency", "perf-latency"),
    ];
    let budgets: Vec<String> = views
        .iter()
        .map(|&(view, ours, peer)| {
            let budget = wall(peer) / 10.0;
            format!(
                "`{view}` {budget:.3} s, {} the time-ordered read (in CPU time: {:.3} s on \
                 {cores} cores, against the read's {:.3} s and the whole view's {:.3} s)",
                if budget < ordered { "under" } else { "over" },
                budget * cores as f64,
                cpu("walk-ordered"),
                cpu(ours),
            )
        })
        .collect();
    writeln!(md, "\n10× perf leaves: {}.", budgets.join("; "))?;
    Ok(())
}

/// How the sched table records: `perf sched record` (its events, system-wide).
const SCHED_RECORD: &[&str] = &["sched", "record"];

/// The workloads, compiled into the scratch directory under the names that choose them.
pub(super) fn build(env: &Env) -> Result<PathBuf> {
    let dir = env.scratch.join("sched-load");
    std::fs::create_dir_all(&dir)?;
    let source = dir.join("sched_workloads.c");
    let first = dir.join("sched_pingpong");
    if std::fs::read_to_string(&source).ok().as_deref() != Some(PROGRAM) || !first.exists() {
        std::fs::write(&source, PROGRAM)?;
        for name in ["sched_pingpong", "sched_pipe"] {
            check_status(
                Command::new("gcc")
                    .args(["-O2", "-pthread", "-o"])
                    .arg(dir.join(name))
                    .arg(&source),
                "gcc",
            )?;
        }
    }
    Ok(dir)
}

/// Records `seconds` of the whole machine while the workloads loop (two of each per CPU),
/// with `perf` and `perf_args` (`["sched", "record"]`, or `record` of chosen events with
/// `-a`).
pub(super) fn record(dir: &Path, seconds: f64, out: &Path, perf_args: &[&str]) -> Result<()> {
    let partial = out.with_extension("partial");
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut loops = String::new();
    for _ in 0..cpus {
        for name in ["sched_pingpong", "sched_pipe"] {
            let _ = write!(
                loops,
                "(while [ -e {stop} ]; do {prog}; done) & ",
                stop = partial.with_extension("running").display(),
                prog = dir.join(name).display()
            );
        }
    }
    let running = partial.with_extension("running");
    std::fs::write(&running, b"")?;
    let script = format!("{loops} sleep {seconds}; rm -f {}; wait", running.display());
    let status = check_status(
        Command::new("perf")
            .args(perf_args)
            .arg("-o")
            .arg(&partial)
            .args(["--", "sh", "-c", &script]),
        &format!("perf {}", perf_args.join(" ")),
    );
    let _ = std::fs::remove_file(&running);
    status?;
    std::fs::rename(&partial, out)?;
    Ok(())
}

/// Records about `mb` MB, the duration scaled from a calibration recording.
pub(super) fn record_sized(dir: &Path, mb: u64, out: &Path, perf_args: &[&str]) -> Result<()> {
    let calibration = out.with_extension("calibration");
    record(dir, CALIBRATION_SECONDS, &calibration, perf_args)?;
    let per_second = std::fs::metadata(&calibration)?.len() as f64 / CALIBRATION_SECONDS;
    std::fs::remove_file(&calibration)?;
    let seconds = (mb as f64 * 1e6 / per_second.max(1.0)).max(0.1);
    println!(
        "recording ~{mb} MB of perf {} ({seconds:.1} s of the load)",
        perf_args.join(" ")
    );
    record(dir, seconds, out, perf_args)
}
