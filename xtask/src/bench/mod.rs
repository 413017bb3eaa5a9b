//! `cargo xtask bench`: the performance table of the project, measured side by side with
//! linux-perf-data 0.13, `cp` and `perf script`. Every workload is a whole child process,
//! timed by wall clock (median of the runs) and watched for peak memory: `ru_maxrss` from
//! `wait4`, and `RssAnon` polled from `/proc/PID/status` — memory beyond the mapped input,
//! since the mapped file's pages count as `RssFile`.

mod big;
mod dwarf;
mod python;
mod runner;
mod sched;
mod table;
mod tracepoints;

use anyhow::{bail, Context, Result};
use runner::{check_status, field, measure_rounds, Env, Measured, Workload, LONG_RUN};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use table::{render, Row, Speed};

const LOAD_SOURCE: &str = include_str!("bench_load.c");

pub struct Options {
    pub file: Option<PathBuf>,
    pub size_mb: u64,
    pub runs: usize,
    pub quick: bool,
    pub out: Option<PathBuf>,
    /// The `--call-graph dwarf` table (full bench only): its recording's size, or none.
    pub dwarf_mb: Option<u64>,
    /// Only the `--call-graph dwarf` table.
    pub dwarf_only: bool,
    /// The `perf sched` table (full bench only): its recording's size, or none.
    pub sched_mb: Option<u64>,
    /// Only the `perf sched` table.
    pub sched_only: bool,
    /// The tracepoint table (full bench only): its recording's size, or none.
    pub tracepoints_mb: Option<u64>,
    /// Only the tracepoint table; with `--out`, its section of that file is replaced.
    pub tracepoints_only: bool,
    /// The big-input table (never by default): its file's size in GB.
    pub big_gb: Option<u64>,
    /// Only the big-input table; with `--out`, its section of that file is replaced.
    pub big_only: bool,
    /// The Python table (never by default).
    pub python: bool,
    /// Only the Python table; with `--out`, its section of that file is replaced.
    pub python_only: bool,
}

impl Options {
    pub fn parse(args: &[&str]) -> Result<Self> {
        let mut o = Options {
            file: None,
            size_mb: 600,
            runs: 5,
            quick: false,
            out: None,
            dwarf_mb: Some(600),
            dwarf_only: false,
            sched_mb: Some(300),
            sched_only: false,
            tracepoints_mb: Some(250),
            tracepoints_only: false,
            big_gb: None,
            big_only: false,
            python: false,
            python_only: false,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |name: &str| {
                it.next()
                    .copied()
                    .with_context(|| format!("{name} needs a value"))
            };
            match *a {
                "--file" => o.file = Some(value("--file")?.into()),
                "--size-mb" => o.size_mb = number(value("--size-mb")?, "--size-mb")?,
                "--runs" => o.runs = number(value("--runs")?, "--runs")?,
                "--out" => o.out = Some(value("--out")?.into()),
                "--quick" => o.quick = true,
                "--dwarf-mb" => o.dwarf_mb = Some(number(value("--dwarf-mb")?, "--dwarf-mb")?),
                "--no-dwarf" => o.dwarf_mb = None,
                "--dwarf-only" => o.dwarf_only = true,
                "--sched-mb" => o.sched_mb = Some(number(value("--sched-mb")?, "--sched-mb")?),
                "--no-sched" => o.sched_mb = None,
                "--sched-only" => o.sched_only = true,
                "--tracepoints-mb" => {
                    o.tracepoints_mb = Some(number(value("--tracepoints-mb")?, "--tracepoints-mb")?)
                }
                "--no-tracepoints" => o.tracepoints_mb = None,
                "--tracepoints-only" => o.tracepoints_only = true,
                "--big-gb" => o.big_gb = Some(number(value("--big-gb")?, "--big-gb")?),
                "--big-only" => o.big_only = true,
                "--python" => o.python = true,
                "--python-only" => o.python_only = true,
                other => bail!("bench: unknown argument {other:?}"),
            }
        }
        if o.quick {
            o.size_mb = 4;
            o.runs = 1;
            o.dwarf_mb = None;
            o.sched_mb = None;
            o.tracepoints_mb = None;
        }
        if o.sched_only && (o.sched_mb.is_none() || o.dwarf_only) {
            bail!("bench: --sched-only measures the sched table alone (not with --quick, --no-sched or --dwarf-only)");
        }
        if o.dwarf_only && (o.dwarf_mb.is_none() || o.out.is_some()) {
            bail!("bench: --dwarf-only measures the dwarf table alone (not with --quick, --no-dwarf or --out)");
        }
        if o.big_only && (o.big_gb.is_none() || o.dwarf_only || o.quick) {
            bail!("bench: --big-only measures the big-input table alone: give --big-gb N, not --dwarf-only or --quick");
        }
        if o.tracepoints_only
            && (o.tracepoints_mb.is_none()
                || o.sched_only
                || o.dwarf_only
                || o.big_only
                || o.python_only)
        {
            bail!("bench: --tracepoints-only measures the tracepoint table alone: not with --quick, --no-tracepoints or another --*-only");
        }
        if o.python_only && (o.big_only || o.dwarf_only || o.quick) {
            bail!("bench: --python-only measures the Python table alone: not with --big-only, --dwarf-only or --quick");
        }
        if o.runs == 0 || o.size_mb == 0 || o.big_gb == Some(0) || o.tracepoints_mb == Some(0) {
            bail!("bench: --runs, --size-mb, --big-gb and --tracepoints-mb must be at least 1");
        }
        Ok(o)
    }
}

fn number<T: std::str::FromStr>(s: &str, name: &str) -> Result<T> {
    s.parse()
        .map_err(|_| anyhow::anyhow!("{name}: expected a whole number, got {s:?}"))
}

pub fn run(root: &Path, opts: &Options) -> Result<()> {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => root.join(t),
        None => root.join("target"),
    };
    let scratch = target.join("bench");
    std::fs::create_dir_all(&scratch)?;
    println!("building perfdata-bench and perfdata (release)");
    let mut build = vec![
        "build",
        "--release",
        "--quiet",
        "-p",
        "perfdata-bench",
        "-p",
        "perfdata-cli",
        "--bins",
    ];
    if opts.quick {
        // Without the Parquet export (arrow and parquet double the release build); its row
        // is measured by the full bench only.
        build.push("--no-default-features");
    }
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(&build)
        .current_dir(root)
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release failed");
    }
    let env = Env {
        root: root.to_path_buf(),
        bench_bin: target.join("release/perfdata-bench"),
        perfdata_bin: target.join("release/perfdata"),
        scratch,
        perf: perf_works(),
        go: Command::new("go")
            .arg("version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success()),
    };
    if opts.dwarf_only {
        let mb = opts.dwarf_mb.unwrap_or(600);
        print!("\n{}", dwarf::measure(&env, mb, opts.runs)?.markdown);
        return Ok(());
    }
    if opts.sched_only {
        let mb = opts.sched_mb.unwrap_or(300);
        let table = sched::measure(&env, mb, opts.runs)?;
        print!("\n{}", table.markdown);
        if let Some(given) = &opts.out {
            let how = format!(
                "Measured alone with `cargo xtask bench --sched-only --runs {} --out {}` at {}.",
                opts.runs,
                given.display(),
                code_measured(&env)
            );
            replace_section(
                &root.join(given),
                SCHED_SECTION,
                &sched_section(&table, &how),
            )?;
        }
        return Ok(());
    }
    if opts.tracepoints_only {
        let mb = opts.tracepoints_mb.unwrap_or(250);
        let tp = tracepoints::measure(&env, mb, opts.runs)?;
        print!("\n{}", tp.markdown);
        if let Some(out) = &opts.out {
            let text = tracepoint_section(&tp, &code_measured(&env));
            replace_section(&root.join(out), TRACEPOINT_SECTION, &text)?;
        }
        return Ok(());
    }
    if opts.big_only {
        let gb = opts.big_gb.unwrap_or(10);
        let big = big::measure(&env, gb)?;
        print!("\n{}", big.markdown);
        if let Some(out) = &opts.out {
            let text = big_section(&big, &code_measured(&env));
            replace_section(&root.join(out), BIG_SECTION, &text)?;
        }
        return Ok(());
    }
    if opts.python_only {
        let input = get_input(&env, opts)?;
        let py = python::measure(&env, &input.path, opts.runs)?;
        print!("\n{}", py.markdown);
        if let Some(out) = &opts.out {
            let text = python_section(&input, &py, &code_measured(&env));
            replace_section(&root.join(out), PYTHON_SECTION, &text)?;
        }
        return Ok(());
    }
    let input = get_input(&env, opts)?;
    let table = measure(&env, &input, opts)?;
    print!("\n{}", table.markdown);
    let dwarf = match opts.dwarf_mb {
        Some(mb) if env.perf => Some(dwarf::measure(&env, mb, opts.runs)?),
        Some(_) => {
            println!("skipped the --call-graph dwarf table: perf does not run here");
            None
        }
        None => None,
    };
    if let Some(d) = &dwarf {
        print!("\n{}", d.markdown);
    }
    let sched_table = match opts.sched_mb {
        Some(mb) if env.perf => Some(sched::measure(&env, mb, opts.runs)?),
        Some(_) => {
            println!("skipped the perf sched table: perf does not run here");
            None
        }
        None => None,
    };
    if let Some(s) = &sched_table {
        print!("\n{}", s.markdown);
    }
    let tp = match opts.tracepoints_mb {
        Some(mb) if env.perf => Some(tracepoints::measure(&env, mb, opts.runs)?),
        Some(_) => {
            println!("skipped the tracepoint table: perf does not run here");
            None
        }
        None => None,
    };
    if let Some(t) = &tp {
        print!("\n{}", t.markdown);
    }
    let py = if opts.python {
        Some(python::measure(&env, &input.path, opts.runs)?)
    } else {
        None
    };
    if let Some(p) = &py {
        print!("\n{}", p.markdown);
    }
    let big = opts.big_gb.map(|gb| big::measure(&env, gb)).transpose()?;
    if let Some(b) = &big {
        print!("\n{}", b.markdown);
    }
    if let Some(out) = &opts.out {
        let mut doc = document(&env, opts, &input, &table)?;
        // A section this run did not measure (`--no-dwarf`, `--no-sched`, and those
        // measured by runs of their own: `--tracepoints-only`, `--big-gb`, `--python`)
        // is kept from the document as it was.
        let out = root.join(out);
        let old = std::fs::read_to_string(&out).unwrap_or_default();
        let dwarf_text = dwarf.as_ref().map(|d| {
            format!(
                "{DWARF_SECTION}\n\n* input: {}\n* peers: perf (unwinds with libunwind, names \
                 inline frames with addr2line), samply (framehop) when installed\n\n{}",
                d.input, d.markdown
            )
        });
        let sched_text = sched_table
            .as_ref()
            .map(|s| sched_section(s, "Measured with the rest of this document."));
        let code = code_measured(&env);
        let tp_text = tp.as_ref().map(|t| tracepoint_section(t, &code));
        let big_text = big.as_ref().map(|b| big_section(b, &code));
        let py_text = py.as_ref().map(|p| python_section(&input, p, &code));
        for (heading, new) in [
            (DWARF_SECTION, dwarf_text),
            (SCHED_SECTION, sched_text),
            (TRACEPOINT_SECTION, tp_text),
            (BIG_SECTION, big_text),
            (PYTHON_SECTION, py_text),
        ] {
            if let Some(section) = new.or_else(|| section_of(&old, heading).map(str::to_string)) {
                doc = with_section(&doc, heading, &section);
            }
        }
        std::fs::write(&out, doc).with_context(|| format!("writing {}", out.display()))?;
        println!("\nwrote {}", out.display());
    }
    Ok(())
}

/// The heading of the `--call-graph dwarf` section of the performance document.
const DWARF_SECTION: &str = "## `--call-graph dwarf` recordings";

/// The heading of the perf sched section of the performance document.
const SCHED_SECTION: &str = "## perf sched views";

/// Replaces the section under `heading` of the document at `out` (a run of one section).
fn replace_section(out: &Path, heading: &str, text: &str) -> Result<()> {
    let doc = std::fs::read_to_string(out).unwrap_or_default();
    let doc = with_section(&doc, heading, text);
    std::fs::write(out, doc).with_context(|| format!("writing {}", out.display()))?;
    println!("\nreplaced the section {heading:?} of {}", out.display());
    Ok(())
}

/// The perf sched section, heading included; `how`: the sentence saying how it was
/// measured.
fn sched_section(s: &sched::SchedTable, how: &str) -> String {
    format!(
        "{SCHED_SECTION}\n\n{how} `--sched-mb N` sizes the recording.\n\n\
         * input: {}\n* peer: perf sched (perf 6.1, libtraceevent), the same views byte for \
         byte (conformance check 18)\n\n{}",
        s.input, s.markdown
    )
}

/// The code measured, as "commit `abc1234`", and whether the tree had changes. Markdown
/// files are left out: they change no measurement, and the performance document itself
/// is left changed by a run of one section for the next.
fn code_measured(env: &Env) -> String {
    let commit = git(&env.root, &["rev-parse", "--short", "HEAD"]);
    let dirty = !git(
        &env.root,
        &[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ".",
            ":(exclude,glob)**/*.md",
        ],
    )
    .is_empty();
    format!(
        "commit `{commit}`{}",
        if dirty {
            " (plus uncommitted changes)"
        } else {
            ""
        }
    )
}

/// The heading of the Python section of the performance document.
const PYTHON_SECTION: &str = "## From Python";

/// The Python section, heading included.
fn python_section(input: &Input, p: &python::PythonTable, code: &str) -> String {
    format!(
        "{PYTHON_SECTION}\n\nMeasured at {code} with `cargo xtask bench --python-only --out \
         docs/performance.md` (the full bench adds it with `--python`): the `perfdata` \
         package built by `maturin build --release`, each row a whole `python3` process.\n\n\
         * input: {:.1} MB, {}\n\n{}",
        input.bytes as f64 / 1e6,
        input.source,
        p.markdown
    )
}

/// The heading of the tracepoint section of the performance document.
const TRACEPOINT_SECTION: &str = "## Tracepoints";

/// The tracepoint section, heading included.
fn tracepoint_section(t: &tracepoints::TracepointTable, code: &str) -> String {
    format!(
        "{TRACEPOINT_SECTION}\n\nMeasured at {code} with `cargo xtask bench --tracepoints-only --out \
         docs/performance.md` (the full bench measures it too; `--tracepoints-mb N` sizes \
         the recording, `--no-tracepoints` leaves it out): the Python rows with the \
         `perfdata` package built by `maturin build --release`, each row a whole process.\n\n\
         * input: {}\n* peers: `perf script` (perf 6.1) with pandas, `perf script -s` (perf's \
         embedded Python), the same output byte for byte (conformance check 20)\n\n{}",
        t.input, t.markdown
    )
}

/// The heading of the big-input section of the performance document.
const BIG_SECTION: &str = "## Big inputs";

/// The big-input section, heading included.
fn big_section(b: &big::BigTable, code: &str) -> String {
    format!(
        "{BIG_SECTION}\n\nMeasured at {code} with `cargo xtask bench --big-gb N --big-only --out \
         docs/performance.md` (one run each; the full bench adds it with `--big-gb N`).\n\n\
         * input: {}\n\n{}",
        b.input, b.markdown
    )
}

/// The section of `doc` under `heading`, heading included, up to the next `## ` heading.
fn section_of<'d>(doc: &'d str, heading: &str) -> Option<&'d str> {
    let start = doc.find(&format!("\n{heading}\n"))? + 1;
    let end = doc[start + heading.len()..]
        .find("\n## ")
        .map_or(doc.len(), |i| start + heading.len() + i + 1);
    Some(doc[start..end].trim_end())
}

/// `doc` with its section under `heading` (up to the next `## ` heading) replaced by
/// `section`, or `section` appended when it has none.
fn with_section(doc: &str, heading: &str, section: &str) -> String {
    let section = section.trim_end();
    let Some(start) = doc.find(&format!("\n{heading}\n")).map(|i| i + 1) else {
        return format!("{}\n\n{section}\n", doc.trim_end());
    };
    let end = doc[start + heading.len()..]
        .find("\n## ")
        .map_or(doc.len(), |i| start + heading.len() + i + 1);
    let rest = &doc[end..];
    let sep = if rest.is_empty() { "\n" } else { "\n\n" };
    format!("{}{section}{sep}{rest}", &doc[..start])
}

struct Input {
    path: PathBuf,
    source: String,
    bytes: u64,
}

fn perf_works() -> bool {
    Command::new("perf")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `--file`, else a cached or new recording (system perf), else a synthesized file.
fn get_input(env: &Env, opts: &Options) -> Result<Input> {
    if let Some(f) = &opts.file {
        let bytes = std::fs::metadata(f)
            .with_context(|| format!("--file {}", f.display()))?
            .len();
        return Ok(Input {
            path: f.clone(),
            source: format!("`{}`", f.display()),
            bytes,
        });
    }
    let mb = opts.size_mb;
    let recorded = env.scratch.join(format!("recorded-{mb}mb.data"));
    let synthesized = env.scratch.join(format!("synth-{mb}mb.data"));
    let (path, source) = if !opts.quick && (recorded.exists() || env.perf) {
        if !recorded.exists() {
            record(env, mb, &recorded)?;
        }
        (recorded, "recorded with `perf record -e cpu-clock -c 10000 -g` (xtask/src/bench_load.c, 2 threads)")
    } else {
        if !synthesized.exists() {
            synthesize(env, mb, &synthesized)?;
        }
        (
            synthesized,
            "synthesized by `perfdata-bench synth` (perf record -g's record mix)",
        )
    };
    let bytes = std::fs::metadata(&path)?.len();
    println!("input: {} ({:.1} MB)", path.display(), bytes as f64 / 1e6);
    Ok(Input {
        path,
        source: source.into(),
        bytes,
    })
}

/// Records the load program with the system perf, sized from a 2-second calibration run
/// (the sample rate depends on how busy the machine is).
fn record(env: &Env, mb: u64, out: &Path) -> Result<()> {
    let source = env.scratch.join("bench_load.c");
    let load = env.scratch.join("bench-load");
    std::fs::write(&source, LOAD_SOURCE)?;
    let cc = Command::new("cc")
        .args(["-O1", "-fno-omit-frame-pointer", "-pthread", "-o"])
        .arg(&load)
        .arg(&source)
        .status()
        .context("running cc")?;
    if !cc.success() {
        bail!("cc failed to compile {}", source.display());
    }
    let calibration = env.scratch.join("calibration.data");
    let seconds = 2.0;
    perf_record(&load, seconds, &calibration)?;
    let rate = std::fs::metadata(&calibration)?.len() as f64 / seconds;
    std::fs::remove_file(&calibration)?;
    let seconds = (mb as f64 * 1e6 / rate).clamp(1.0, 900.0);
    println!(
        "recording {mb} MB: about {seconds:.0} s of perf record ({:.1} MB/s)",
        rate / 1e6
    );
    let partial = out.with_extension("partial");
    perf_record(&load, seconds, &partial)?;
    std::fs::rename(&partial, out)?;
    Ok(())
}

fn perf_record(load: &Path, seconds: f64, out: &Path) -> Result<()> {
    let status = Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-c", "10000", "-g", "-o"])
        .arg(out)
        .arg("--")
        .arg(load)
        .arg(format!("{seconds:.1}"))
        .status()
        .context("running perf record")?;
    if !status.success() {
        bail!("perf record failed ({status})");
    }
    Ok(())
}

/// A pipe-layout stream from `perfdata-bench synth`, converted to the file layout.
fn synthesize(env: &Env, mb: u64, out: &Path) -> Result<()> {
    println!("synthesizing {mb} MB");
    let pipe = out.with_extension("pipe");
    check_status(
        Command::new(&env.bench_bin)
            .arg("synth")
            .arg(&pipe)
            .arg(mb.to_string()),
        "perfdata-bench synth",
    )?;
    check_status(
        Command::new(&env.perfdata_bin)
            .args(["convert", "--layout", "file"])
            .arg(&pipe)
            .arg("-o")
            .arg(out),
        "perfdata convert --layout file",
    )?;
    std::fs::remove_file(&pipe)?;
    Ok(())
}

struct Table {
    markdown: String,
    samples: u64,
    frames: u64,
}

fn measure(env: &Env, input: &Input, opts: &Options) -> Result<Table> {
    let file = input.path.to_str().context("input path is not UTF-8")?;
    let scratch = |name: &str| env.scratch.join(name).to_string_lossy().into_owned();
    let (out, pipe, compressed, stats_dir, parquet_dir) = (
        scratch("out.data"),
        scratch("input.pipe.data"),
        scratch("compressed.data"),
        scratch("stats"),
        scratch("parquet"),
    );
    let viewer_outs = [
        scratch("out.pb.gz"),
        scratch("out.speedscope.json"),
        scratch("out.firefox.json"),
    ];
    let bench = |args: &[&str]| {
        let mut w = Workload::new(&env.bench_bin, args);
        w.keep_stdout = true;
        w
    };
    let perfdata = |args: &[&str]| Workload::new(&env.perfdata_bin, args);
    // perf script's text into its commonest consumer, inferno's collapse-perf (the bench
    // binary runs its code), as one shell pipeline each.
    let collapse = format!(
        "{} inferno-collapse-perf >/dev/null",
        env.bench_bin.display()
    );
    let script_inferno_ours = format!("{} script {file} | {collapse}", env.perfdata_bin.display());
    let script_inferno_perf = format!("perf script -i {file} | {collapse}");
    // The consumer alone on the same text: the floor of both pipelines.
    let script_text = scratch("script.txt");
    let inferno_alone = format!(
        "{} inferno-collapse-perf <{script_text} >/dev/null",
        env.bench_bin.display()
    );
    // In measuring order: the pipe copy and the compressed file are made by rows before
    // the rows that read them.
    let mut workloads: Vec<(&'static str, Workload)> = vec![
        ("scan", bench(&["scan", file])),
        ("ours", bench(&["ours", file])),
        ("ours-ordered", bench(&["ours", file, "--ordered"])),
        ("lpd", bench(&["lpd", file])),
        (
            "cp",
            Workload::new(Path::new("cp"), &[file, &out]).writing(&out),
        ),
        (
            "convert",
            perfdata(&["convert", file, "-o", &out]).writing(&out),
        ),
        (
            "convert-typed",
            perfdata(&["convert", "--typed", file, "-o", &out]).writing(&out),
        ),
        (
            "convert-pipe",
            perfdata(&["convert", "--layout", "pipe", file, "-o", &pipe]).writing(&pipe),
        ),
        (
            "convert-compress",
            perfdata(&["convert", "--compress", file, "-o", &compressed]).writing(&compressed),
        ),
        (
            "convert-decompress",
            perfdata(&["convert", "--decompress", &compressed, "-o", &out]).writing(&out),
        ),
        ("dump", perfdata(&["dump", file])),
        ("dump-json", perfdata(&["dump", "--json", file])),
        ("dump-pipe", {
            let mut w = perfdata(&["dump", "-"]);
            w.stdin_cat = Some(PathBuf::from(&pipe));
            w
        }),
        ("report", perfdata(&["report", file])),
        // perf's default report (Children and the call graph on a -g file), and its table.
        (
            "report-flat",
            perfdata(&["report", "--no-children", "-g", "none", file]),
        ),
        // A filter that selects every sample: what applying one costs.
        (
            "report-filtered",
            perfdata(&["report", file, "--time", "0%-100%"]),
        ),
        ("collapse", perfdata(&["collapse", file])),
        // perf script's text (issue 38), with perf's default fields and with a short list.
        ("script", perfdata(&["script", file])),
        (
            "script-fields",
            perfdata(&["script", "-F", "comm,tid,time,ip,sym", file]),
        ),
        (
            "script-inferno",
            Workload::new(Path::new("sh"), &["-c", &script_inferno_ours]),
        ),
        (
            "script-text",
            perfdata(&["script", file, "-o", &script_text]).writing(&script_text),
        ),
        (
            "inferno-alone",
            Workload::new(Path::new("sh"), &["-c", &inferno_alone]),
        ),
        ("stats", perfdata(&["stats", file, "-o", &stats_dir])),
        // The recording against itself: both read in full, every entry matched.
        ("diff", perfdata(&["diff", file, file])),
    ];
    if env.perf {
        workloads.push((
            "perf-diff",
            Workload::new(Path::new("perf"), &["diff", file, file]),
        ));
        workloads.push((
            "perf-script",
            Workload::new(Path::new("perf"), &["script", "-i", file]),
        ));
        workloads.push((
            "perf-script-inferno",
            Workload::new(Path::new("sh"), &["-c", &script_inferno_perf]),
        ));
        workloads.push((
            "perf-script-fields",
            Workload::new(
                Path::new("perf"),
                &["script", "-F", "comm,tid,time,ip,sym", "-i", file],
            ),
        ));
        // perf's default on a -g file (children and callers), and its flat table.
        workloads.push((
            "perf-report",
            Workload::new(Path::new("perf"), &["report", "--stdio", "-i", file]),
        ));
        workloads.push((
            "perf-report-flat",
            Workload::new(
                Path::new("perf"),
                &[
                    "report",
                    "--stdio",
                    "--no-children",
                    "-g",
                    "none",
                    "-i",
                    file,
                ],
            ),
        ));
    }
    // The gperftools CPU profile: ours vs `go tool pprof -raw` (without symbolization, its
    // fastest) on a synthesized 10 MB profile (1 MB with --quick).
    let gp_mb = if opts.quick { 1 } else { 10 };
    let gp_file = scratch(&format!("gperftools-{gp_mb}mb.prof"));
    if !Path::new(&gp_file).exists() {
        check_status(
            Command::new(&env.bench_bin).args(["gperftools-synth", &gp_file, &gp_mb.to_string()]),
            "perfdata-bench gperftools-synth",
        )?;
    }
    if !opts.quick {
        // Built only by the full bench (the `parquet` feature; see the build above).
        workloads.push(("export", perfdata(&["export", file, "-o", &parquet_dir])));
        // The viewers' formats (the same `export` command).
        for (key, format, out) in [
            ("export-pprof", "pprof", &viewer_outs[0]),
            ("export-speedscope", "speedscope", &viewer_outs[1]),
            ("export-firefox", "firefox", &viewer_outs[2]),
        ] {
            workloads.push((
                key,
                perfdata(&["export", file, "--to", format, "-o", out]).writing(out),
            ));
        }
    }
    workloads.push(("gp-ours", bench(&["gperftools", &gp_file])));
    let go_env: Vec<String> = ["HOME", "GOCACHE", "PPROF_TMPDIR"]
        .iter()
        .map(|v| format!("{v}={}", scratch(&format!("go-{}", v.to_lowercase()))))
        .collect();
    if env.go {
        let mut args: Vec<&str> = go_env.iter().map(String::as_str).collect();
        args.extend([
            "GOPROXY=off",
            "GOTOOLCHAIN=local",
            "go",
            "tool",
            "pprof",
            "-raw",
            "-symbolize=none",
            &gp_file,
        ]);
        // Its output (megabytes) goes to /dev/null while timed (a kept stdout is read only
        // after the exit, so it must stay under a pipe's capacity); the agreement check
        // below reads it from an untimed run.
        workloads.push(("gp-go", Workload::new(Path::new("env"), &args)));
    }
    println!("measuring ({} run(s) each, median)", opts.runs);
    let results = measure_rounds(env, &workloads, opts.runs)?;
    for f in [&out, &pipe, &compressed] {
        let _ = std::fs::remove_file(f);
    }
    let _ = std::fs::remove_dir_all(&stats_dir);
    let viewer_bytes: Vec<u64> = viewer_outs
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .collect();
    for f in &viewer_outs {
        let _ = std::fs::remove_file(f);
    }
    let parquet_bytes = dir_size(Path::new(&parquet_dir));
    let _ = std::fs::remove_dir_all(&parquet_dir);

    let (samples, frames) = agreed_counts(&results)?;
    if let Some((_, go)) = workloads.iter().find(|(k, _)| *k == "gp-go") {
        let out = Command::new(&go.program)
            .args(&go.args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .context("running go tool pprof -raw")?;
        if !out.status.success() {
            bail!("go tool pprof -raw failed on {gp_file}");
        }
        gperftools_agree(
            &results["gp-ours"].stdout,
            &String::from_utf8_lossy(&out.stdout),
        )?;
    }
    let rows = [
        Row::new(
            "decode every SAMPLE (ip, time, callchain), file order, the pages mapped ahead \
             on another thread (`Recording::populate_ahead`, as perfdata's walks do)",
            "ours",
        )
        .peer("lpd", Speed::FasterThanPeer(7.0))
        .decode(),
        Row::new(
            "same, vs reading the mapped file (sum of u64, its pages mapped ahead alike)",
            "ours",
        )
            .peer("scan", Speed::AtMostPeerTimes(2.5))
            .decode(),
        Row::new(
            "same, time order (`records().time_ordered()`)",
            "ours-ordered",
        )
        .peer("lpd", Speed::FasterThanPeer(5.0))
        .decode(),
        Row::new(
            "`perfdata convert IN OUT` (copy-through) vs `cp`",
            "convert",
        )
        .peer("cp", Speed::AtMostPeerTimes(2.0))
        .rss_bounded(),
        Row::new("`convert --typed` vs copy-through", "convert-typed")
            .peer("convert", Speed::AtMostPeerTimes(3.0))
            .rss_bounded(),
        Row::new("`convert --layout pipe`", "convert-pipe").rss_bounded(),
        Row::new("`convert --compress`", "convert-compress").rss_bounded(),
        Row::new("`convert --decompress`", "convert-decompress").rss_bounded(),
        Row::new("`perfdata dump` vs `perf script`", "dump")
            .peer("perf-script", Speed::FasterThanPeer(5.0)),
        Row::new("`perfdata dump --json` vs `perf script`", "dump-json")
            .peer("perf-script", Speed::FasterThanPeer(3.0)),
        Row::new("`cat pipe \\| perfdata dump -`", "dump-pipe").rss_bounded(),
        Row::new(
            "`perfdata report --time 0%-100%` (a filter selecting everything) vs `perfdata report`",
            "report-filtered",
        )
        .peer("report", Speed::AtMostPeerTimes(1.10)),
        // Issue 20's target: perf's default report (Children, the call graph) 10x faster.
        Row::new(
            "`perfdata report` vs `perf report --stdio` (Children, call graph)",
            "report",
        )
        .peer("perf-report", Speed::FasterThanPeer(10.0)),
        Row::new(
            "`perfdata report --no-children -g none` vs `perf report --stdio --no-children -g none`",
            "report-flat",
        )
        // perf without call graphs: its fastest table; no target of the issue.
        .peer("perf-report-flat", Speed::FasterThanPeer(1.0)),
        Row::new(
            "`perfdata stats` (four CSVs) vs `perf report --stdio`",
            "stats",
        )
        .peer("perf-report", Speed::FasterThanPeer(1.0)),
        Row::new(
            "`perfdata collapse` (folded stacks) vs `perf script`",
            "collapse",
        )
        .peer("perf-script", Speed::FasterThanPeer(1.0)),
        Row::new(
            "`perfdata script` vs `perf script` (the same text, default fields)",
            "script",
        )
        .peer("perf-script", Speed::FasterThanPeer(10.0))
        .rss_bounded(),
        Row::new(
            "`perfdata script -F comm,tid,time,ip,sym` vs `perf script -F comm,tid,time,ip,sym`",
            "script-fields",
        )
        .peer("perf-script-fields", Speed::FasterThanPeer(10.0)),
        Row::new(
            "`perfdata script \\| inferno-collapse-perf` vs `perf script \\| inferno-collapse-perf`",
            "script-inferno",
        )
        .peer("perf-script-inferno", Speed::FasterThanPeer(5.0)),
        Row::new(
            "`perfdata diff` vs `perf diff` (the recording against itself)",
            "diff",
        )
        .peer("perf-diff", Speed::FasterThanPeer(10.0)),
        Row::new(
            "read a gperftools CPU profile (10 MB; 1 MB with --quick) vs `go tool pprof -raw`",
            "gp-ours",
        )
        .peer("gp-go", Speed::FasterThanPeer(10.0)),
    ];
    let mut rows = rows.to_vec();
    if !opts.quick {
        rows.push(
            Row::new("`perfdata export --to parquet` (one core)", "export")
                .speed(Speed::AtLeastMBps(100.0))
                .rss_bounded()
                .decode(),
        );
        // The viewers' exports: pprof symbolizes as `report` does (the shared cost) and
        // replaces `perf script`, where every text path to these viewers starts.
        rows.push(
            Row::new(
                "`perfdata export --to pprof` vs `perfdata report`",
                "export-pprof",
            )
            .peer("report", Speed::AtMostPeerTimes(2.0)),
        );
        if env.perf {
            rows.push(
                Row::new(
                    "`perfdata export --to pprof` vs `perf script`",
                    "export-pprof",
                )
                .peer("perf-script", Speed::FasterThanPeer(10.0)),
            );
        }
        rows.push(Row::new("`perfdata export --to speedscope`", "export-speedscope").decode());
        rows.push(Row::new("`perfdata export --to firefox`", "export-firefox").decode());
    }
    let mut md = render(&rows, &results, input.bytes, samples)?;
    if let (Some(alone), Some(perf_pipe)) = (
        results.get("inferno-alone"),
        results.get("perf-script-inferno"),
    ) {
        writeln!(
            md,
            "\n`inferno-collapse-perf` alone on the same text (read from a file): {:.3} s. \
             It is the floor of both pipelines, however fast the text comes: the pipeline's \
             ratio cannot exceed perf's pipeline / that, {:.1}× on this machine.",
            alone.wall.as_secs_f64(),
            perf_pipe.wall.as_secs_f64() / alone.wall.as_secs_f64().max(1e-9)
        )?;
    }
    let _ = std::fs::remove_file(&script_text);
    if !opts.quick {
        writeln!(
            md,
            "\nThe Parquet export is {:.1} MB, {:.1}% of the {:.1} MB perf.data.",
            parquet_bytes as f64 / 1e6,
            parquet_bytes as f64 * 100.0 / input.bytes.max(1) as f64,
            input.bytes as f64 / 1e6
        )?;
        for (name, bytes) in ["pprof", "speedscope", "Firefox Profiler"]
            .iter()
            .zip(&viewer_bytes)
        {
            writeln!(
                md,
                "The {name} export is {:.1} MB, {:.1}% of the perf.data.",
                *bytes as f64 / 1e6,
                *bytes as f64 * 100.0 / input.bytes.max(1) as f64,
            )?;
        }
    }
    Ok(Table {
        markdown: md,
        samples,
        frames,
    })
}

/// Bytes of the files under `dir`.
fn dir_size(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                dir_size(&p)
            } else {
                e.metadata().map_or(0, |m| m.len())
            }
        })
        .sum()
}

/// The three sample walks must report the same samples, frames and checksum before any
/// ratio means anything.
fn agreed_counts(results: &HashMap<&str, Measured>) -> Result<(u64, u64)> {
    let lines: Vec<(&str, &str)> = ["ours", "ours-ordered", "lpd"]
        .iter()
        .map(|k| (*k, results[k].stdout.trim()))
        .collect();
    if lines.iter().any(|(_, l)| *l != lines[0].1) {
        let mut msg = String::from("the readers disagree on the input:\n");
        for (k, l) in &lines {
            let _ = writeln!(msg, "  {k:<13} {l}");
        }
        bail!("{msg}");
    }
    Ok((field(lines[0].1, "samples")?, field(lines[0].1, "frames")?))
}

/// Our gperftools reader and `go tool pprof -raw` must count the same samples before their
/// times are compared.
fn gperftools_agree(ours: &str, go_raw: &str) -> Result<()> {
    let ours: u64 = ours
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("samples="))
        .with_context(|| format!("no samples= in {ours:?}"))?
        .parse()?;
    let mut in_samples = false;
    let mut go = 0u64;
    for line in go_raw.lines() {
        match line.trim() {
            "Samples:" => in_samples = true,
            "Locations" => in_samples = false,
            l if in_samples => {
                go += l
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0)
            }
            _ => {}
        }
    }
    if ours != go {
        bail!("gperftools profile: ours counts {ours} samples, go tool pprof -raw {go}");
    }
    Ok(())
}

/// `docs/performance.md`: how it was measured, on what, and the table.
fn document(env: &Env, opts: &Options, input: &Input, table: &Table) -> Result<String> {
    let mut cmd = String::from("cargo xtask bench");
    if let Some(f) = &opts.file {
        let _ = write!(cmd, " --file {}", f.display());
    } else if opts.quick {
        cmd += " --quick";
    } else {
        let _ = write!(cmd, " --size-mb {}", opts.size_mb);
    }
    if !opts.quick {
        let _ = write!(cmd, " --runs {}", opts.runs);
    }
    // The sections left out keep what an earlier run wrote: the command says which.
    if opts.tracepoints_mb.is_none() && !opts.quick {
        cmd += " --no-tracepoints";
    }
    if opts.python {
        cmd += " --python";
    }
    if let Some(o) = &opts.out {
        let _ = write!(cmd, " --out {}", o.display());
    }
    let mut d = String::from("# Performance\n\n");
    let _ = writeln!(
        d,
        "Measured with `{cmd}` at {}. Each workload is a whole process; times are the \
         median of the runs, taken in rounds (every workload of a table once per round, so \
         a row's two sides share the same minutes of the machine; a workload whose first \
         run exceeds {} s runs once).\n",
        code_measured(env),
        LONG_RUN.as_secs()
    );
    let _ = writeln!(d, "* machine: {}", machine());
    let _ = writeln!(
        d,
        "* input: {:.1} MB, {} samples, {} callchain frames; {}",
        input.bytes as f64 / 1e6,
        table.samples,
        table.frames,
        input.source
    );
    let _ = writeln!(
        d,
        "* peers: linux-perf-data 0.13 (`perfdata-bench lpd`, which always sorts by time), \
         `cp`, `perf script` ({})\n",
        if env.perf {
            "system perf"
        } else {
            "absent: rows marked n/a"
        }
    );
    d += &table.markdown;
    d += "\nRatios: \"× faster\" is peer time / ours; \"× cp\" (and the like) is ours / peer. \
          Peak RSS is `ru_maxrss` (it includes the pages of the mapped input); peak anon RSS \
          is `RssAnon` from `/proc/PID/status` polled every 2 ms — memory beyond the mapped \
          input. \"RSS bounded\" means peak anon RSS ≤ 64 MiB. All three sample walks \
          (file order, time order, linux-perf-data) reported the same samples, frames and \
          checksum of ip, time and frames.\n";
    Ok(d)
}

fn git(root: &Path, args: &[&str]) -> String {
    Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let model = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split(':')
                .nth(1)
                .map(str::trim)
                .map(String::from)
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem_kib: u64 = read("/proc/meminfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("MemTotal:")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    format!(
        "{cpus} CPUs ({model}), {:.0} GiB memory, Linux {}",
        mem_kib as f64 / 1024.0 / 1024.0,
        read("/proc/sys/kernel/osrelease").trim()
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_section_is_replaced_in_place_or_appended() {
        let doc = "# P\n\ntable\n\n## Big inputs\n\nold\n\n## Later\n\nkept\n";
        assert_eq!(
            with_section(doc, "## Big inputs", "## Big inputs\n\nnew\n"),
            "# P\n\ntable\n\n## Big inputs\n\nnew\n\n## Later\n\nkept\n"
        );
        let last = "# P\n\n## Big inputs\n\nold\n";
        assert_eq!(
            with_section(last, "## Big inputs", "## Big inputs\n\nnew"),
            "# P\n\n## Big inputs\n\nnew\n"
        );
        assert_eq!(
            with_section("# P\n\ntable\n", "## Big inputs", "## Big inputs\n\nnew"),
            "# P\n\ntable\n\n## Big inputs\n\nnew\n"
        );
    }

    #[test]
    fn a_section_not_measured_again_is_kept_from_the_old_document() {
        let old = "# P\n\nold table\n\n## Big inputs\n\nbig\n\n## From Python\n\npy\n";
        assert_eq!(
            section_of(old, "## Big inputs"),
            Some("## Big inputs\n\nbig")
        );
        assert_eq!(
            section_of(old, "## From Python"),
            Some("## From Python\n\npy")
        );
        assert_eq!(section_of("# P\n", "## Big inputs"), None);
        let mut doc = "# P\n\nnew table\n".to_string();
        for h in ["## Big inputs", "## From Python"] {
            doc = with_section(&doc, h, section_of(old, h).unwrap());
        }
        assert_eq!(
            doc,
            "# P\n\nnew table\n\n## Big inputs\n\nbig\n\n## From Python\n\npy\n"
        );
    }

    #[test]
    fn the_dwarf_and_sched_sections_not_measured_are_kept_in_their_place() {
        let old = format!(
            "# P\n\nold\n\n{DWARF_SECTION}\n\ndwarf\n\n{SCHED_SECTION}\n\nsched\n\n\
             {TRACEPOINT_SECTION}\n\ntp\n"
        );
        let mut doc = "# P\n\nnew\n".to_string();
        // This run measured the sched views only.
        let fresh = format!("{SCHED_SECTION}\n\nsched 2");
        for (h, new) in [
            (DWARF_SECTION, None),
            (SCHED_SECTION, Some(fresh)),
            (TRACEPOINT_SECTION, None),
        ] {
            let section = new
                .or_else(|| section_of(&old, h).map(str::to_string))
                .unwrap();
            doc = with_section(&doc, h, &section);
        }
        assert_eq!(
            doc,
            format!(
                "# P\n\nnew\n\n{DWARF_SECTION}\n\ndwarf\n\n{SCHED_SECTION}\n\nsched 2\n\n\
                 {TRACEPOINT_SECTION}\n\ntp\n"
            )
        );
    }

    use super::*;

    fn walk(stdout: &str) -> Measured {
        Measured {
            wall: std::time::Duration::ZERO,
            runs: 1,
            max_rss_kib: 0,
            max_anon_kib: 0,
            cpu: std::time::Duration::ZERO,
            stdout: stdout.into(),
        }
    }

    #[test]
    fn gperftools_readers_must_count_the_same_samples() {
        let go = "PeriodType: cpu nanoseconds\nPeriod: 250000\nSamples:\n\
                  samples/count cpu/nanoseconds\n  3  750000: 1 2\n  4  1000000: 3\n\
                  Locations\n     1: 0x1000 M=1\n";
        gperftools_agree("records=2 samples=7 leaves=2", go).unwrap();
        assert!(gperftools_agree("records=2 samples=8 leaves=2", go).is_err());
        assert!(gperftools_agree("nothing", go).is_err());
    }

    #[test]
    fn readers_must_agree_before_any_ratio() {
        let same = "samples=3 frames=10 checksum=00000000000000ff\n";
        let mut results = HashMap::new();
        results.insert("ours", walk(same));
        results.insert("ours-ordered", walk(same));
        results.insert("lpd", walk(same));
        assert_eq!(agreed_counts(&results).unwrap(), (3, 10));
        results.insert(
            "lpd",
            walk("samples=3 frames=9 checksum=00000000000000ff\n"),
        );
        let err = agreed_counts(&results).unwrap_err().to_string();
        assert!(
            err.contains("disagree") && err.contains("frames=9"),
            "{err}"
        );
    }
}
