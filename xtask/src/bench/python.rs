//! The Python table (issue 23; `--python`, full bench only): the `perfdata` package built
//! as a release wheel (maturin) into `target/bench/py/`, then, on the bench recording:
//! `samples()` into a pandas DataFrame against the path people take today (`perf script`
//! text parsed by pandas) and against the Rust Parquet export; the floor under it (the same
//! DataFrame from an Arrow file: Python, pyarrow and pandas without the walk); the walk on
//! one thread timed inside the process (issue 42's target: ≤ 0.5 s); and the Spark data
//! source (`local[2]`) over copies of the recording, beside Spark's own Parquet reader on
//! the export of the same copies. Each row but the in-process walk is a whole `python3`
//! process.

use super::runner::{check_status, field, measure_workload, Env, Measured, Workload};
use super::table::{render, Row, Speed};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// The columns both DataFrames hold (ours adds the stack id, which `perf script` text
/// cannot give without its call chains).
const OURS: &str = r#"
import sys, perfdata
cols = ["ip", "time", "pid", "tid", "period", "stack_id"]
df = perfdata.open(sys.argv[1]).samples(columns=cols, symbolize=False).read_pandas()
print(f"rows={len(df)} period={int(df['period'].sum())}")
"#;

/// [`OURS`] on one walk thread, the walk timed in the process: from opening the recording
/// to the whole table in Arrow (`read_all`), wall and CPU seconds (every thread's),
/// appended to the file named second (standard output stays the same at every run).
/// pyarrow is imported before the clock starts: its import is the floor's (the Arrow
/// file's row), not the walk's, which `samples()` would otherwise count.
const ONE_THREAD: &str = r#"
import sys, time, perfdata, pyarrow
cols = ["ip", "time", "pid", "tid", "period", "stack_id"]
t0, c0 = time.perf_counter(), time.process_time()
table = perfdata.open(sys.argv[1]).samples(columns=cols, symbolize=False, workers=1).read_all()
walk, cpu = time.perf_counter() - t0, time.process_time() - c0
df = table.to_pandas()
with open(sys.argv[2], "a") as f:
    f.write(f"walk={walk:.6f} cpu={cpu:.6f}\n")
print(f"rows={len(df)} period={int(df['period'].sum())}")
"#;

/// The same table, written to an Arrow file once (the floor's input).
const TO_ARROW: &str = r#"
import sys, perfdata, pyarrow as pa
cols = ["ip", "time", "pid", "tid", "period", "stack_id"]
table = perfdata.open(sys.argv[1]).samples(columns=cols, symbolize=False).read_all()
with pa.OSFile(sys.argv[2], "wb") as f, pa.ipc.new_file(f, table.schema) as w:
    w.write_table(table)
"#;

/// [`OURS`] without the walk: the table read from that file, memory-mapped (no copy), into
/// pandas. Interpreter, imports, `to_pandas` and exit: the Python part of the row.
const FLOOR: &str = r#"
import sys, pyarrow as pa
df = pa.ipc.open_file(pa.memory_map(sys.argv[1])).read_pandas()
print(f"rows={len(df)} period={int(df['period'].sum())}")
"#;

const PERF_SCRIPT: &str = r#"
import subprocess, sys
import pandas as pd
fields = "pid,tid,time,period,ip"
p = subprocess.Popen(["perf", "script", "-i", sys.argv[1], "-F", fields, "-G"],
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
df = pd.read_csv(p.stdout, sep=r"\s+", header=None, engine="c",
                 names=["pidtid", "time", "period", "ip"],
                 dtype={"pidtid": str, "time": str, "period": "uint64", "ip": str})
p.wait()
pt = df["pidtid"].str.split("/", expand=True).astype("int32")
df["pid"], df["tid"] = pt[0], pt[1]
df["time"] = df["time"].str.rstrip(":").astype(float)
df["ip"] = df["ip"].map(lambda s: int(s, 16))
df = df.drop(columns="pidtid")
print(f"rows={len(df)} period={int(df['period'].sum())}")
"#;

/// Spark through the data source: the JVM one when a jar is given (`spark.jars`), else
/// the Python one (`-`).
const SPARK: &str = r#"
import os, sys, time
from pyspark.sql import SparkSession, functions as F
import perfdata.spark
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
builder = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
           .config("spark.sql.shuffle.partitions", "2"))
if sys.argv[2] != "-":
    builder = builder.config("spark.jars", sys.argv[2])
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
perfdata.spark.register(spark)
start = time.perf_counter()
df = spark.read.format("perfdata").option("symbolize", "false").load(sys.argv[1])
rows = df.groupBy("event").agg(F.count("*").alias("n")).collect()
query = time.perf_counter() - start
print("rows=" + str(sum(r["n"] for r in rows)) + f" query={query:.3f}")
spark.stop()
"#;

/// Builds the JVM data source's jar (untimed: once per machine, then cached) and prints
/// its path.
const SPARK_JAR: &str = r#"
import perfdata.spark
print("jar=" + perfdata.spark.jar())
"#;

/// Spark's own Parquet reader on the Parquet export of the same copies: the yardstick of
/// the data source (the same query; Spark reads the `event` column alone).
const SPARK_PARQUET: &str = r#"
import sys, time
from functools import reduce
from pyspark.sql import SparkSession, functions as F
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
# One read per copy, then a union: Spark's partition discovery refuses sibling
# directories of the same name under different parents as one table.
start = time.perf_counter()
df = reduce(lambda a, b: a.unionByName(b), [spark.read.parquet(p) for p in sys.argv[1:]])
rows = df.groupBy("event").agg(F.count("*").alias("n")).collect()
query = time.perf_counter() - start
print("rows=" + str(sum(r["n"] for r in rows)) + f" query={query:.3f}")
spark.stop()
"#;

/// The Spark data source's target, M samples/s per core (issue 42).
const SPARK_TARGET: f64 = 1.0;

/// The one-thread walk's target, seconds (issue 42: the walk of the bench recording's
/// samples on one core).
const WALK_TARGET: f64 = 0.5;

/// The median wall and CPU seconds of the `walk=… cpu=…` lines [`ONE_THREAD`] appends.
fn median_walk(text: &str) -> Result<(f64, f64)> {
    let mut walls = vec![];
    let mut cpus = vec![];
    for line in text.lines() {
        walls.push(field::<f64>(line, "walk")?);
        cpus.push(field::<f64>(line, "cpu")?);
    }
    if walls.is_empty() {
        bail!("the one-thread script wrote no timing");
    }
    walls.sort_by(f64::total_cmp);
    cpus.sort_by(f64::total_cmp);
    Ok((walls[walls.len() / 2], cpus[cpus.len() / 2]))
}

/// The table, and what it was measured on.
pub(super) struct PythonTable {
    pub(super) markdown: String,
}

/// Builds and installs the wheel, then measures the rows on `input`: `runs` runs each,
/// Spark once over copies of it.
pub(super) fn measure(env: &Env, input: &Path, runs: usize) -> Result<PythonTable> {
    let wheel = Wheel::install(env)?;
    let (py, site) = (wheel.python.clone(), wheel.site.clone());
    let has = |m: &str| wheel.has(m);
    let file = input.to_str().context("input path is not UTF-8")?;
    let script = |name: &str, text: &str| -> Result<String> {
        let path = env.scratch.join(name);
        std::fs::write(&path, text)?;
        Ok(path.to_string_lossy().into_owned())
    };
    let python = |script: &str, arg: &str| wheel.run(script, &[arg]);
    let ours = script("bench_samples.py", OURS)?;
    let peer = script("bench_perf_script.py", PERF_SCRIPT)?;
    let parquet = env
        .scratch
        .join("py-parquet")
        .to_string_lossy()
        .into_owned();
    let mut results: HashMap<&str, Measured> = HashMap::new();
    println!("measuring the Python table ({runs} run(s) each, median)");
    results.insert(
        "samples",
        measure_workload(env, &python(&ours, file), runs)?,
    );
    let _ = std::fs::remove_dir_all(&parquet);
    let export = Workload::new(&env.perfdata_bin, &["export", file, "-o", &parquet]);
    results.insert("export", measure_workload(env, &export, runs)?);
    let _ = std::fs::remove_dir_all(&parquet);
    let mut rows = vec![Row::new(
        "`samples()` → pandas vs `perfdata export --to parquet` (Rust)",
        "samples",
    )
    .peer("export", Speed::AtMostPeerTimes(2.0))
    .decode()];
    let perf = env.perf;
    if perf {
        results.insert(
            "perf-script",
            measure_workload(env, &python(&peer, file), runs)?,
        );
        let (a, b) = (&results["samples"].stdout, &results["perf-script"].stdout);
        if a.trim() != b.trim() {
            bail!(
                "the two DataFrames differ: ours {:?}, perf script's {:?}",
                a.trim(),
                b.trim()
            );
        }
        rows.insert(
            0,
            Row::new("`samples()` → pandas vs `perf script` + pandas", "samples")
                .peer("perf-script", Speed::ComparedToPeer)
                .decode(),
        );
    }
    // Spark over copies of the recording (links to it).
    let copies = 4;
    let dir = env.scratch.join("spark-input");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    for i in 0..copies {
        std::os::unix::fs::symlink(input, dir.join(format!("copy{i}.data")))?;
    }
    let glob = dir.join("*.data").to_string_lossy().into_owned();
    let spark = script("bench_spark.py", SPARK)?;
    let spark_ok = has("pyspark")
        && Command::new("java")
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if spark_ok {
        // The JVM data source (its jar needs javac), and the Python one beside it.
        let jar = Command::new("env")
            .arg(format!("PYTHONPATH={}", site.display()))
            .arg(&py)
            .arg(script("bench_spark_jar.py", SPARK_JAR)?)
            .output()?;
        let jar_path = String::from_utf8_lossy(&jar.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("jar=").map(str::to_string));
        match jar_path.filter(|_| jar.status.success()) {
            Some(jar) => {
                let w = wheel.run(&spark, &[&glob, &jar]);
                results.insert("spark", measure_workload(env, &w, 1)?);
            }
            None => println!(
                "  the JVM data source's jar was not built (no javac?): {}",
                String::from_utf8_lossy(&jar.stderr).trim()
            ),
        }
        let w = wheel.run(&spark, &[&glob, "-"]);
        results.insert("spark-python", measure_workload(env, &w, 1)?);
        // Spark's Parquet reader on the export of the same copies (written once, untimed;
        // links to it: one directory per copy).
        let exported = env.scratch.join("spark-parquet");
        let _ = std::fs::remove_dir_all(&exported);
        check_status(
            Command::new(&env.perfdata_bin)
                .args(["export", file, "-o"])
                .arg(exported.join("export")),
            "perfdata export (Spark's Parquet input)",
        )?;
        let mut tables = vec![];
        for i in 0..copies {
            let link = exported.join(format!("copy{i}"));
            std::os::unix::fs::symlink(exported.join("export"), &link)?;
            tables.push(link.join("samples").to_string_lossy().into_owned());
        }
        let tables: Vec<&str> = tables.iter().map(String::as_str).collect();
        let reader = script("bench_spark_parquet.py", SPARK_PARQUET)?;
        let measured = measure_workload(env, &wheel.run(&reader, &tables), 1);
        let _ = std::fs::remove_dir_all(&exported);
        results.insert("spark-parquet", measured?);
    }
    // The walk alone on one thread, timed in the process (median of the runs).
    let timings = env.scratch.join("walk-timings.txt");
    let _ = std::fs::remove_file(&timings);
    let timings_arg = timings.to_string_lossy().into_owned();
    let one_thread = measure_workload(
        env,
        &wheel.run(
            &script("bench_samples_one_thread.py", ONE_THREAD)?,
            &[file, &timings_arg],
        ),
        runs,
    )?;
    let (walk, walk_cpu) = median_walk(&std::fs::read_to_string(&timings)?)?;
    let _ = std::fs::remove_file(&timings);
    println!("  the walk in the process: {walk:.3} s, cpu {walk_cpu:.3} s (median)");
    results.insert(
        "walk",
        Measured {
            wall: std::time::Duration::from_secs_f64(walk),
            runs: one_thread.runs,
            max_rss_kib: one_thread.max_rss_kib,
            max_anon_kib: one_thread.max_anon_kib,
            cpu: std::time::Duration::from_secs_f64(walk_cpu),
            stdout: one_thread.stdout.clone(),
        },
    );
    rows.push(
        Row::new(
            "`samples(workers=1)` walk in the process (open to `read_all`, one walk thread)",
            "walk",
        )
        .speed(Speed::AtMostSeconds(WALK_TARGET))
        .decode(),
    );
    // The floor: what the samples row spends in Python, pyarrow and pandas alone.
    let arrow = env.scratch.join("samples.arrow");
    check_status(
        Command::new(&py)
            .env("PYTHONPATH", &site)
            .args([&script("bench_to_arrow.py", TO_ARROW)?, file])
            .arg(&arrow),
        "writing the samples to an Arrow file",
    )?;
    let floor_script = script("bench_floor.py", FLOOR)?;
    let floor = measure_workload(env, &python(&floor_script, &arrow.to_string_lossy()), runs);
    let _ = std::fs::remove_file(&arrow);
    let floor = floor?;
    for (what, other) in [("Arrow file", &floor), ("one thread", &one_thread)] {
        if other.stdout.trim() != results["samples"].stdout.trim() {
            bail!(
                "the {what}'s DataFrame differs: {:?}, ours {:?}",
                other.stdout.trim(),
                results["samples"].stdout.trim()
            );
        }
    }
    let samples = field::<u64>(&results["samples"].stdout, "rows")?;
    let input_bytes = std::fs::metadata(input)?.len();
    let mut md = render(&rows, &results, input_bytes, samples)?;
    if !perf {
        md += "\n`perf` does not run here: the `perf script` + pandas row is left out.\n";
    }
    let (ours, floor) = (
        results["samples"].wall.as_secs_f64(),
        floor.wall.as_secs_f64(),
    );
    let one = one_thread.wall.as_secs_f64();
    write!(
        md,
        "\nThe same DataFrame from the same table in an Arrow file (memory-mapped, no walk): \
         {floor:.3} s. That is the interpreter, pyarrow, pandas, `to_pandas` and exit: the \
         walk adds {:.3} s to it ({:.3} s on one walk thread, `workers=1`: {one:.3} s in all). \
         Timed in the process (pyarrow imported before the clock starts: its import is in \
         that figure), the one-thread walk (opening the recording, replaying it and \
         building the Arrow columns, to `read_all`) takes {walk:.3} s ({walk_cpu:.3} s of CPU), \
         {:.0} ns a sample. Its target: ≤ {WALK_TARGET} s on one core ({:.0} ns a sample), \
         the walk alone; the interpreter, pyarrow, pandas and `to_pandas` around it (the \
         Arrow file's figure) are the same whatever the walk costs.",
        ours - floor,
        one - floor,
        walk * 1e9 / samples as f64,
        WALK_TARGET * 1e9 / samples as f64,
    )?;
    if let Some(peer) = results.get("perf-script") {
        write!(
            md,
            " `perf script` + pandas takes {:.1}× the whole `samples()` process.",
            peer.wall.as_secs_f64() / ours,
        )?;
    }
    md += "\n";
    let total = input_bytes as f64 * copies as f64;
    let expected = samples * copies;
    // Samples per second per core (`local[2]`: two): of the query (from `read` to the
    // collected result, timed in the script), and of the whole process (the session's
    // start, the same few seconds for every reader, included).
    let rates = |m: &Measured, what: &str| -> Result<(f64, f64, f64)> {
        let rows = field::<u64>(&m.stdout, "rows")?;
        if rows != expected {
            bail!("{what} counted {rows} samples, {copies} copies hold {expected}");
        }
        let query = field::<f64>(&m.stdout, "query")?;
        let per_core = |t: f64| rows as f64 / 1e6 / t / 2.0;
        Ok((query, per_core(query), per_core(m.wall.as_secs_f64())))
    };
    writeln!(
        md,
        "\nSpark `local[2]`, `GROUP BY event` over {copies} copies of the recording \
         ({:.1} GB, {expected} samples), one run each. The query is timed in the script, from \
         `read` to the collected result; the process adds the session's start, the same few \
         seconds for every reader. Target: ≥ {SPARK_TARGET} M samples/s per core through the \
         data source, on the query.\n",
        total / 1e9,
    )?;
    let mut listed = false;
    for (key, what) in [
        (
            "spark",
            "the JVM data source (`spark.jars`: `perfdata.spark.jar()`; reads the `event` \
             column alone)",
        ),
        (
            "spark-python",
            "the Python data source (PySpark's API: every column crosses to the JVM)",
        ),
        (
            "spark-parquet",
            "Spark's own Parquet reader on the Parquet export of the same copies \
             (`perfdata export`, written beforehand; reads the `event` column alone)",
        ),
    ] {
        if let Some(m) = results.get(key) {
            let (query, rate, with_start) = rates(m, what)?;
            let verdict = match key {
                "spark" if rate >= SPARK_TARGET => " — met",
                "spark" => " — not met",
                _ => "",
            };
            writeln!(
                md,
                "* {what}: the query {query:.1} s, {rate:.2} M samples/s per core \
                 ({:.0} MB/s){verdict}; the process {:.1} s, {with_start:.2} M samples/s per core",
                total / 1e6 / query / 2.0,
                m.wall.as_secs_f64(),
            )?;
            listed = true;
        }
    }
    if !results.contains_key("spark") {
        md += "* the JVM data source: not measured (its jar needs javac, a JDK)\n";
    }
    if !listed {
        md += "\nSpark or Java is missing: the Spark figures are left out.\n";
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(PythonTable { markdown: md })
}

/// The release wheel of the `perfdata` package, installed into `target/bench/py/` (once
/// per bench run: the Python and tracepoint tables share it).
pub(super) struct Wheel {
    /// The interpreter (`$PYTHON`, else `python3`), as its `sys.executable` names it: a
    /// version manager's shim in `PATH` (pyenv's runs a few shell scripts) would add its
    /// start to every row, ours and the peers'.
    pub(super) python: String,
    /// Where the package is installed (`PYTHONPATH`).
    pub(super) site: std::path::PathBuf,
}

impl Wheel {
    /// Builds the wheel (`maturin build --release`) and installs it, unless this process
    /// did already; fails naming what to `pip install` when a module is missing.
    pub(super) fn install(env: &Env) -> Result<Wheel> {
        static DONE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
        let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let py = resolved_interpreter(&py).unwrap_or(py);
        let wheel = Wheel {
            python: py.clone(),
            site: env.scratch.join("py"),
        };
        let missing: Vec<&str> = ["maturin", "pandas", "pyarrow"]
            .into_iter()
            .filter(|m| !wheel.has(m))
            .collect();
        if !missing.is_empty() {
            bail!(
                "the Python rows need {}: `pip install {}`",
                missing.join(", "),
                missing.join(" ")
            );
        }
        if DONE.get().is_some() {
            return Ok(wheel);
        }
        let wheels = env.scratch.join("wheels");
        let _ = std::fs::remove_dir_all(&wheels);
        println!("building the perfdata wheel (release)");
        check_status(
            Command::new(&py)
                .args([
                    "-m",
                    "maturin",
                    "build",
                    "--release",
                    "--interpreter",
                    &py,
                    "-o",
                ])
                .arg(&wheels)
                .current_dir(env.root.join("perfdata-python")),
            "maturin build --release",
        )?;
        let file = std::fs::read_dir(&wheels)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|e| e == "whl"))
            .context("maturin wrote no wheel")?;
        let _ = std::fs::remove_dir_all(&wheel.site);
        check_status(
            Command::new(&py)
                .args(["-m", "pip", "install", "-q", "--no-deps", "--target"])
                .arg(&wheel.site)
                .arg(&file),
            "pip install --target",
        )?;
        let _ = DONE.set(());
        Ok(wheel)
    }

    /// Whether the interpreter imports `module`.
    pub(super) fn has(&self, module: &str) -> bool {
        Command::new(&self.python)
            .args(["-c", &format!("import {module}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// `python3 SCRIPT ARGS…` with the package importable, its standard output kept.
    pub(super) fn run(&self, script: &str, args: &[&str]) -> Workload {
        let mut w = Workload::new(Path::new("env"), &[]);
        w.args = vec![
            format!("PYTHONPATH={}", self.site.display()),
            self.python.clone(),
            script.to_string(),
        ];
        w.args.extend(args.iter().map(|a| a.to_string()));
        w.keep_stdout = true;
        w
    }
}

/// The interpreter `py` runs (its `sys.executable`); `None` when it does not say.
fn resolved_interpreter(py: &str) -> Option<String> {
    let out = Command::new(py)
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !path.is_empty()).then_some(path)
}
