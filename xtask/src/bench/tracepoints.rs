//! The tracepoint table (issue 39): a system-wide `perf record -e 'sched:*' -e
//! 'raw_syscalls:*' -a` of at least `--tracepoints-mb` MB (250 by default) while the sched
//! table's workloads loop on every CPU, cached in `target/bench/`, read three ways:
//! one event's typed table into pandas (`Recording.tracepoints()`) against `perf script`
//! text parsed by pandas, perf's `syscall-counts-by-pid.py` run by `perfdata script -s`
//! against `perf script -s` (the same bytes), and the Parquet export with its tracepoint
//! tables. The Python rows use the release wheel the Python table builds.

use super::python::Wheel;
use super::runner::{field, measure_workload, sample_count, Env, Measured, Workload};
use super::table::{render, Row, Speed};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The recording's events: every scheduler and system call tracepoint, system-wide.
const RECORD: &[&str] = &["record", "-e", "sched:*", "-e", "raw_syscalls:*", "-a"];

/// The event of the DataFrame rows: the most frequent of the recording, with typed fields
/// (`long id`, `unsigned long args[6]`).
const EVENT: &str = "raw_syscalls:sys_enter";

/// What both DataFrame scripts print of their frame: the rows and wrapping sums of every
/// column (`args` flattened), so that the two agree on values, not only on a count.
const SUMMARY: &str = r#"
import numpy as np
def summary(df):
    s = lambda c: int(df[c].to_numpy().astype(np.uint64).sum(dtype=np.uint64))
    args = np.concatenate(df["args"].to_numpy()).astype(np.uint64).sum(dtype=np.uint64)
    return (f"rows={len(df)} time={s('common_time')} cpu={s('common_cpu')} "
            f"tid={s('common_tid')} id={s('id')} args={int(args)}")
"#;

/// Ours: the event's table, the columns `perf script` text can give, into pandas.
const OURS: &str = r#"
import sys, perfdata
cols = ["common_time", "common_cpu", "common_tid", "id", "args"]
df = perfdata.open(sys.argv[1]).tracepoints(sys.argv[2], columns=cols).read_pandas()
print(summary(df))
"#;

/// [`OURS`]'s table written to an Arrow file once (the floor's input).
const TO_ARROW: &str = r#"
import sys, perfdata, pyarrow as pa
cols = ["common_time", "common_cpu", "common_tid", "id", "args"]
table = perfdata.open(sys.argv[1]).tracepoints(sys.argv[2], columns=cols).read_all()
with pa.OSFile(sys.argv[3], "wb") as f, pa.ipc.new_file(f, table.schema) as w:
    w.write_table(table)
"#;

/// [`OURS`] without the walk: the same imports, the table read from that file
/// (memory-mapped, no copy) into pandas, the same summary.
const FLOOR: &str = r#"
import sys, perfdata, pyarrow as pa
df = pa.ipc.open_file(pa.memory_map(sys.argv[1])).read_pandas()
print(summary(df))
"#;

/// The interpreter with the imports alone: an empty DataFrame.
const IMPORTS: &str = r#"
import perfdata, pyarrow, pandas as pd
df = pd.DataFrame()
print(f"rows={len(df)}")
"#;

/// The path people take today: `perf script` text of the same fields (nanosecond times),
/// the event's lines picked by `grep` (perf script selects no event), parsed by pandas
/// into the same DataFrame: `tid [cpu] secs.nsecs: event: NR id (a0, a1, … a5)`.
const PERF_SCRIPT: &str = r#"
import subprocess, sys
import numpy as np
import pandas as pd
perf = subprocess.Popen(["perf", "script", "-i", sys.argv[1], "-F", "tid,cpu,time,event,trace",
                         "--ns"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
grep = subprocess.Popen(["grep", "-F", f" {sys.argv[2]}: "], stdin=perf.stdout,
                        stdout=subprocess.PIPE)
perf.stdout.close()
names = ["common_tid", "cpu", "time", "event", "nr", "id"] + [f"a{i}" for i in range(6)]
df = pd.read_csv(grep.stdout, sep=r"\s+", header=None, engine="c", names=names,
                 usecols=[n for n in names if n not in ("event", "nr")],
                 dtype={"common_tid": "int32", "cpu": str, "time": str, "id": "int64",
                        **{f"a{i}": str for i in range(6)}})
grep.wait(); perf.wait()
out = pd.DataFrame()
secs = df["time"].str.rstrip(":").str.split(".", expand=True)
out["common_time"] = secs[0].astype("uint64") * 10**9 + secs[1].astype("uint64")
out["common_cpu"] = df["cpu"].str.strip("[]").astype("uint32")
out["common_tid"] = df["common_tid"]
out["id"] = df["id"]
args = np.empty((len(df), 6), dtype=np.uint64)
for i in range(6):
    args[:, i] = df[f"a{i}"].str.strip("(),").map(lambda s: int(s, 16)).to_numpy(np.uint64)
out["args"] = list(args)
print(summary(out))
"#;

/// The script of the `script -s` row: perf's own.
const SCRIPT: &str = "syscall-counts-by-pid.py";

/// The table, and what it was measured on.
pub(super) struct TracepointTable {
    pub(super) markdown: String,
    pub(super) input: String,
}

/// Records (or reuses) the recording and measures the rows, `runs` runs each.
pub(super) fn measure(env: &Env, mb: u64, runs: usize) -> Result<TracepointTable> {
    if !env.perf {
        bail!("the tracepoint table needs the system perf (to record its input, and as the peer)");
    }
    let script = perf_script_path()?;
    let wheel =
        Wheel::install(env).context("the tracepoint table (`--no-tracepoints` leaves it out)")?;
    let dir = super::sched::build(env)?;
    let input = env.scratch.join(format!("tracepoints-{mb}mb.data"));
    if !input.exists() {
        super::sched::record_sized(&dir, mb, &input, RECORD)?;
    }
    let file = input.to_str().context("input path is not UTF-8")?;
    let write = |name: &str, text: &str| -> Result<String> {
        let path = env.scratch.join(name);
        std::fs::write(&path, text)?;
        Ok(path.to_string_lossy().into_owned())
    };
    let ours_py = write("bench_tracepoints.py", &format!("{SUMMARY}{OURS}"))?;
    let peer_py = write(
        "bench_tracepoints_perf_script.py",
        &format!("{SUMMARY}{PERF_SCRIPT}"),
    )?;
    let script = script.to_str().context("script path is not UTF-8")?;
    let site = format!("PYTHONPATH={}", wheel.site.display());
    let python = format!("PERFDATA_PYTHON={}", wheel.python);
    // Both hosts with the same hash seed (a script's set order must not differ by chance)
    // and locale, as conformance check 20 runs them.
    let fixed = ["PYTHONHASHSEED=0", "LC_ALL=C"];
    let env_run = |args: Vec<&str>| {
        let mut w = Workload::new(Path::new("env"), &[]);
        w.args = fixed.iter().map(|s| s.to_string()).collect();
        w.args.extend(args.into_iter().map(str::to_string));
        w.keep_stdout = true;
        w
    };
    let perfdata_bin = env.perfdata_bin.to_string_lossy().into_owned();
    let parquet = env.scratch.join("tp-parquet");
    let parquet_dir = parquet.to_string_lossy().into_owned();
    println!("measuring the tracepoint table ({runs} run(s) each, median)");
    let mut results: HashMap<&str, Measured> = HashMap::new();
    results.insert(
        "tp-pandas",
        measure_workload(env, &wheel.run(&ours_py, &[file, EVENT]), runs)?,
    );
    results.insert(
        "tp-perf-pandas",
        measure_workload(env, &wheel.run(&peer_py, &[file, EVENT]), runs)?,
    );
    let (a, b) = (
        results["tp-pandas"].stdout.trim(),
        results["tp-perf-pandas"].stdout.trim(),
    );
    if a != b {
        bail!("the two {EVENT} DataFrames differ: ours {a:?}, perf script's {b:?}");
    }
    // The floor under the pandas row: Python, the imports, pyarrow and pandas without
    // the walk.
    let arrow = env.scratch.join("tracepoints.arrow");
    let arrow_file = arrow.to_string_lossy().into_owned();
    let to_arrow = write("bench_tracepoints_to_arrow.py", TO_ARROW)?;
    super::runner::check_status(
        Command::new(&wheel.python)
            .env("PYTHONPATH", &wheel.site)
            .args([to_arrow.as_str(), file, EVENT, arrow_file.as_str()]),
        "writing the tracepoint table to an Arrow file",
    )?;
    let floor_py = write("bench_tracepoints_floor.py", &format!("{SUMMARY}{FLOOR}"))?;
    let floor = measure_workload(env, &wheel.run(&floor_py, &[&arrow_file]), runs);
    let _ = std::fs::remove_file(&arrow);
    let floor = floor?;
    if floor.stdout.trim() != a {
        bail!(
            "the Arrow file's {EVENT} DataFrame differs: {:?}, ours {a:?}",
            floor.stdout.trim()
        );
    }
    let imports_py = write("bench_tracepoints_imports.py", IMPORTS)?;
    let imports = measure_workload(env, &wheel.run(&imports_py, &[]), runs)?;
    let ours_script = env_run(vec![
        &site,
        &python,
        &perfdata_bin,
        "script",
        "-i",
        file,
        "-s",
        script,
    ]);
    results.insert("tp-script", measure_workload(env, &ours_script, runs)?);
    let perf_script = env_run(vec!["perf", "script", "-i", file, "-s", script]);
    results.insert("tp-perf-script", measure_workload(env, &perf_script, runs)?);
    let (a, b) = (
        &results["tp-script"].stdout,
        &results["tp-perf-script"].stdout,
    );
    if a != b || a.is_empty() {
        bail!(
            "`perfdata script -s {SCRIPT}` printed {} bytes, `perf script -s` {}: {}",
            a.len(),
            b.len(),
            first_difference(b, a)
        );
    }
    let _ = std::fs::remove_dir_all(&parquet);
    let export = Workload::new(&env.perfdata_bin, &["export", file, "-o", &parquet_dir]);
    results.insert("tp-export", measure_workload(env, &export, runs)?);
    let rows = field::<u64>(&results["tp-pandas"].stdout, "rows")?;
    let exported = exported_rows(&wheel, &parquet)?;
    let _ = std::fs::remove_dir_all(&parquet);
    if exported != rows {
        bail!("the Parquet export's {EVENT} table holds {exported} rows, the DataFrame {rows}");
    }
    let input_bytes = std::fs::metadata(&input)?.len();
    let table_rows = vec![
        Row::new(
            "`tracepoints(\"raw_syscalls:sys_enter\")` → pandas vs `perf script` + pandas",
            "tp-pandas",
        )
        .peer("tp-perf-pandas", Speed::FasterThanPeer(20.0))
        .decode(),
        Row::new(
            "`perfdata script -s syscall-counts-by-pid.py` vs `perf script -s` (the same bytes)",
            "tp-script",
        )
        .peer("tp-perf-script", Speed::FasterThanPeer(3.0))
        .decode(),
        Row::new(
            "`perfdata export --to parquet` with the tracepoint tables (one core)",
            "tp-export",
        )
        .speed(Speed::AtLeastMBps(100.0))
        .decode(),
    ];
    let samples = sample_count(env, &input)?;
    let mut md = render(&table_rows, &results, input_bytes, samples)?;
    let (ours, peer) = (
        results["tp-pandas"].wall.as_secs_f64(),
        results["tp-perf-pandas"].wall.as_secs_f64(),
    );
    let (floor, imports) = (floor.wall.as_secs_f64(), imports.wall.as_secs_f64());
    writeln!(
        md,
        "\nThe floor under the pandas row: `python3` importing `perfdata`, pyarrow and pandas \
         and making an empty DataFrame takes {imports:.3} s; the same DataFrame and sums from \
         the same table in a memory-mapped Arrow file (no walk) {floor:.3} s. The walk adds \
         {:.3} s to that. 20× `perf script` + pandas is {:.3} s{}.",
        ours - floor,
        peer / 20.0,
        if peer / 20.0 < floor {
            ", under the floor: no walk reaches it".to_string()
        } else {
            format!(", which leaves the walk {:.3} s", peer / 20.0 - floor)
        },
    )?;
    let anon = |k: &str| results[k].max_anon_kib as f64 / 1024.0;
    let cpu = |k: &str| results[k].cpu.as_secs_f64();
    writeln!(
        md,
        "\nCPU time (user + system, the median run's; the cores are shared, and wall time \
         counts the waits): pandas rows {:.2} s ours, {:.2} s `perf script` + pandas \
         ({:.1}×); `script -s` {:.2} s ours, {:.2} s perf ({:.1}×); the export {:.2} s \
         ({:.0} MB/s of CPU time).",
        cpu("tp-pandas"),
        cpu("tp-perf-pandas"),
        cpu("tp-perf-pandas") / cpu("tp-pandas").max(1e-9),
        cpu("tp-script"),
        cpu("tp-perf-script"),
        cpu("tp-perf-script") / cpu("tp-script").max(1e-9),
        cpu("tp-export"),
        input_bytes as f64 / 1e6 / cpu("tp-export").max(1e-9),
    )?;
    writeln!(
        md,
        "\nBoth DataFrames hold the {rows} `{EVENT}` samples with the same values (rows and \
         sums of every column checked); peak anonymous memory {:.1} MiB ours, {:.1} MiB \
         `perf script` + pandas. `perf script` selects no event: its lines are picked by \
         `grep`. samples/s counts every sample of the recording.",
        anon("tp-pandas"),
        anon("tp-perf-pandas"),
    )?;
    Ok(TracepointTable {
        markdown: md,
        input: format!(
            "{:.1} MB, {samples} samples, {rows} of them `{EVENT}`: `perf record -e \
             'sched:*' -e 'raw_syscalls:*' -a` while `sched_workloads.c`'s ping-pong and pipe \
             loop on every CPU",
            input_bytes as f64 / 1e6
        ),
    })
}

/// perf's `syscall-counts-by-pid.py`, where perf installs its scripts.
fn perf_script_path() -> Result<PathBuf> {
    ["/usr/lib/perf-core", "/usr/libexec/perf-core"]
        .iter()
        .map(|d| Path::new(d).join("scripts/python").join(SCRIPT))
        .find(|p| p.is_file())
        .with_context(|| {
            format!("perf's {SCRIPT} is not installed (perf-core/scripts/python: linux-perf)")
        })
}

/// Rows of the event's table in the Parquet export under `dir` (pyarrow counts them).
fn exported_rows(wheel: &Wheel, dir: &Path) -> Result<u64> {
    let table = dir
        .join("tracepoints")
        .join(EVENT.replace(':', "__"))
        .to_string_lossy()
        .into_owned();
    let out = Command::new(&wheel.python)
        .args([
            "-c",
            "import sys, pyarrow.dataset as ds; \
             print('rows=%d' % ds.dataset(sys.argv[1], format='parquet').count_rows())",
            &table,
        ])
        .output()
        .context("running python3 to count the exported rows")?;
    if !out.status.success() {
        bail!(
            "counting the rows of {table}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    field(&String::from_utf8_lossy(&out.stdout), "rows")
}

/// Where two texts first differ, as `line N: perf "…" / ours "…"`.
fn first_difference(theirs: &str, ours: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (theirs.lines().collect(), ours.lines().collect());
    let cut = |s: &str| s.chars().take(120).collect::<String>();
    (0..a.len().max(b.len()))
        .find(|&i| a.get(i) != b.get(i))
        .map_or("the texts differ in their line ends".into(), |i| {
            format!(
                "line {}: perf {:?} / ours {:?}",
                i + 1,
                a.get(i).map(|s| cut(s)),
                b.get(i).map(|s| cut(s))
            )
        })
}
