//! The `--call-graph dwarf` table of the full bench (issue 19): the conformance suite's
//! C++ program (`conformance/programs/dwarf_cpp.cpp`: STL containers, `std::sort`,
//! exceptions; `g++ -O2 -g -fomit-frame-pointer`) run long under `perf record -F 4000
//! --call-graph dwarf` — a recording of at least 500 MB, cached in `target/bench/` — and
//! unwound by perf (libunwind), by samply (framehop, when installed) and by us. A small
//! recording of the same program (one default run) shows that our peak memory follows the
//! unwind tables touched, not the number of samples.

use super::runner::{check_status, measure_rounds, sample_count, Env, Workload};
use super::table::{render, Row, Speed};
use anyhow::{bail, Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const PROGRAM: &str = include_str!("../../../conformance/programs/dwarf_cpp.cpp");
/// Rounds of the calibration recording (the program's default run is 120).
const CALIBRATION_ROUNDS: u64 = 240;

/// The table, and what it was measured on.
pub(super) struct DwarfTable {
    pub(super) markdown: String,
    pub(super) input: String,
}

/// Records (or reuses) the dwarf recordings and measures the dwarf rows: `runs` runs of
/// each workload, on a recording of about `mb` MB.
pub(super) fn measure(env: &Env, mb: u64, runs: usize) -> Result<DwarfTable> {
    if !env.perf {
        bail!("the dwarf table needs the system perf (to record its input, and as the peer)");
    }
    let program = build(env)?;
    let big = env.scratch.join(format!("dwarf-cpp-{mb}mb.data"));
    let small = env.scratch.join("dwarf-cpp-small.data");
    if !big.exists() {
        record_sized(&program, mb, &big)?;
    }
    if !small.exists() {
        record(&program, 120, &small)?;
    }
    let file = big.to_str().context("input path is not UTF-8")?;
    let small_file = small.to_str().context("input path is not UTF-8")?;
    let unwound = env.scratch.join("dwarf-unwound.data");
    let unwound_s = unwound.to_string_lossy().into_owned();
    let samply_json = env.scratch.join("samply.json");
    let samply_json_s = samply_json.to_string_lossy().into_owned();
    // The Firefox Profiler's file, gzip-compressed, by each (issue 42).
    let firefox_gz = env.scratch.join("perfdata-firefox.json.gz");
    let firefox_gz_s = firefox_gz.to_string_lossy().into_owned();
    let samply_gz = env.scratch.join("samply-firefox.json.gz");
    let samply_gz_s = samply_gz.to_string_lossy().into_owned();
    let perfdata = |args: &[&str]| Workload::new(&env.perfdata_bin, args);
    let perf = |args: &[&str]| Workload::new(Path::new("perf"), args);
    // annotate (issue 41): the hottest functions, chosen alike for both by the share
    // under which functions are left out.
    let limit = hottest_limit(env, &big, ANNOTATED)?;
    let mut workloads: Vec<(&'static str, Workload)> = vec![
        // The same view as perf's below: Self, the call graph in callee order.
        ("report-g", perfdata(&["report", "--no-children", file])),
        ("collapse-inline", perfdata(&["collapse", "--inline", file])),
        // perf script's text of the dwarf recording (issue 38): the same bytes, unwound.
        ("script", perfdata(&["script", file])),
        (
            "collapse-inline-small",
            perfdata(&["collapse", "--inline", small_file]),
        ),
        (
            "convert-unwind",
            perfdata(&["convert", "--unwind", file, "-o", &unwound_s]).writing(&unwound_s),
        ),
        (
            "export-firefox",
            perfdata(&["export", file, "--to", "firefox", "-o", &firefox_gz_s])
                .writing(&firefox_gz_s),
        ),
        (
            "perf-report",
            perf(&["report", "--stdio", "--no-children", "-i", file]),
        ),
        ("perf-script", perf(&["script", "-i", file])),
        (
            "annotate",
            perfdata(&["annotate", "--stdio", "--percent-limit", &limit, file]),
        ),
        (
            "perf-annotate",
            perf(&["annotate", "--stdio", "--percent-limit", &limit, "-i", file]),
        ),
    ];
    let samply = Command::new("samply")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if samply {
        workloads.push((
            "samply",
            Workload::new(
                Path::new("samply"),
                &["import", file, "--save-only", "-o", &samply_json_s],
            )
            .writing(&samply_json_s),
        ));
        // The same output as `export --to firefox`: a symbolized profile, gzip-compressed.
        workloads.push((
            "samply-firefox",
            Workload::new(
                Path::new("samply"),
                &[
                    "import",
                    file,
                    "-s",
                    "-n",
                    "-o",
                    &samply_gz_s,
                    "--unstable-presymbolicate",
                ],
            )
            .writing(&samply_gz_s),
        ));
    }
    println!("measuring the dwarf table ({runs} run(s) each, median)");
    let results = measure_rounds(env, &workloads, runs)?;
    let unwound_bytes = std::fs::metadata(&unwound).map_or(0, |m| m.len());
    let _ = std::fs::remove_file(&unwound);
    let _ = std::fs::remove_file(&samply_json);
    let _ = std::fs::remove_file(&firefox_gz);
    let _ = std::fs::remove_file(&samply_gz);
    // samply's symbols sidecar, when it writes one: without it samply's profile holds
    // addresses, not names, less work than our symbolized export (said under the table).
    let sidecars = [
        env.scratch.join("samply-firefox.json.syms.json"),
        env.scratch.join("samply-firefox.json.gz.syms.json"),
    ];
    let samply_symbolized = sidecars.iter().any(|p| p.exists());
    for p in &sidecars {
        let _ = std::fs::remove_file(p);
    }

    let input_bytes = std::fs::metadata(&big)?.len();
    let samples = sample_count(env, &big)?;
    let mut rows = vec![
        Row::new(
            "`perfdata report --no-children` vs `perf report --stdio --no-children`",
            "report-g",
        )
        .peer("perf-report", Speed::FasterThanPeer(5.0))
        .decode(),
        Row::new(
            "`perfdata collapse --inline` vs `perf script`",
            "collapse-inline",
        )
        .peer("perf-script", Speed::FasterThanPeer(5.0))
        .decode(),
        Row::new(
            "`perfdata script` vs `perf script` (the same text)",
            "script",
        )
        .peer("perf-script", Speed::FasterThanPeer(10.0))
        .decode(),
    ];
    rows.push(
        Row::new(
            "`perfdata annotate --stdio` vs `perf annotate --stdio` (the 20 hottest functions, with source)",
            "annotate",
        )
        .peer("perf-annotate", Speed::FasterThanPeer(10.0)),
    );
    if samply {
        rows.push(
            Row::new(
                "`perfdata report --no-children` vs `samply import --save-only`",
                "report-g",
            )
            .peer("samply", Speed::FasterThanPeer(1.0)),
        );
    }
    // Without samply: our time, and "n/a (no peer)".
    rows.push(
        Row::new(
            "`perfdata export --to firefox -o X.json.gz` vs `samply import -s -n -o X.json.gz \
             --unstable-presymbolicate` (a symbolized Firefox Profiler profile, gzip)",
            "export-firefox",
        )
        .peer("samply-firefox", Speed::FasterThanPeer(1.5)),
    );
    rows.push(Row::new("`perfdata convert --unwind`", "convert-unwind").decode());
    rows.push(Row::new(
        "`perfdata collapse --inline` on the small recording",
        "collapse-inline-small",
    ));
    let mut md = render(&rows, &results, input_bytes, samples)?;
    if samply {
        // The Firefox row's memory target: at most samply's, plus the input we map.
        let rss = |k: &str| results[k].max_rss_kib as f64 / 1024.0;
        let bound = rss("samply-firefox") + input_bytes as f64 / (1 << 20) as f64;
        writeln!(
            md,
            "\nPeak RSS of `export --to firefox`: {:.1} MiB; samply's {:.1} MiB plus the \
             mapped input ({:.1} MiB): {:.1} MiB (target: at most that, {}).",
            rss("export-firefox"),
            rss("samply-firefox"),
            input_bytes as f64 / (1 << 20) as f64,
            bound,
            if rss("export-firefox") <= bound {
                "met"
            } else {
                "not met"
            },
        )?;
        if !samply_symbolized {
            md += "samply wrote no symbols sidecar for `--unstable-presymbolicate` here: its \
                   profile holds addresses only (`meta.symbolicated` false), so the peer did \
                   less than our export, which names every frame (inline frames too).\n";
        }
    } else {
        md += "\nsamply is not installed (`cargo install samply`): its rows (report, and \
               `export --to firefox`) are left out.\n";
    }
    let small_bytes = std::fs::metadata(&small)?.len();
    let anon = |k: &str| results[k].max_anon_kib as f64 / 1024.0;
    writeln!(
        md,
        "\n`convert --unwind` wrote {:.1} MB: {:.1}% of the input ({:.0}× smaller). Peak \
         anonymous memory of `collapse --inline`: {:.1} MiB on the {:.0} MB recording, \
         {:.1} MiB on the {:.1} MB one of the same program (the unwind tables and symbols \
         of the objects touched; the samples stream through).",
        unwound_bytes as f64 / 1e6,
        unwound_bytes as f64 * 100.0 / input_bytes.max(1) as f64,
        input_bytes as f64 / unwound_bytes.max(1) as f64,
        anon("collapse-inline"),
        input_bytes as f64 / 1e6,
        anon("collapse-inline-small"),
        small_bytes as f64 / 1e6,
    )?;
    // script reads the same unwind tables, symbols and DWARF as `collapse --inline`: its
    // memory beyond theirs is its own (bounded: 64 MiB).
    writeln!(
        md,
        "Peak anonymous memory of `script`: {:.1} MiB, {:.1} MiB beyond `collapse --inline`'s \
         (the same unwind tables, symbols and DWARF; bound 64 MiB).",
        anon("script"),
        anon("script") - anon("collapse-inline"),
    )?;
    Ok(DwarfTable {
        markdown: md,
        input: format!(
            "{:.1} MB, {samples} samples: `dwarf_cpp.cpp` recorded with `perf record -e \
             cpu-clock -F 4000 --call-graph dwarf` (8 KiB user stack copies)",
            input_bytes as f64 / 1e6
        ),
    })
}

/// The program, compiled into the scratch directory (kept: the recordings' unwinding
/// reads its CFI and symbols).
fn build(env: &Env) -> Result<PathBuf> {
    let source = env.scratch.join("dwarf_cpp.cpp");
    let binary = env.scratch.join("dwarf_cpp");
    if std::fs::read_to_string(&source).ok().as_deref() != Some(PROGRAM) || !binary.exists() {
        std::fs::write(&source, PROGRAM)?;
        check_status(
            Command::new("g++")
                .args(["-O2", "-g", "-fomit-frame-pointer", "-o"])
                .arg(&binary)
                .arg(&source),
            "g++",
        )?;
    }
    Ok(binary)
}

/// Records `rounds` rounds of the program.
fn record(program: &Path, rounds: u64, out: &Path) -> Result<()> {
    let partial = out.with_extension("partial");
    check_status(
        Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-F", "4000"])
            .args(["--call-graph", "dwarf", "-o"])
            .arg(&partial)
            .arg("--")
            .arg(program)
            .arg(rounds.to_string()),
        "perf record --call-graph dwarf",
    )?;
    std::fs::rename(&partial, out)?;
    Ok(())
}

/// Records about `mb` MB, the rounds scaled from a calibration recording.
fn record_sized(program: &Path, mb: u64, out: &Path) -> Result<()> {
    let calibration = out.with_extension("calibration");
    record(program, CALIBRATION_ROUNDS, &calibration)?;
    let per_round = std::fs::metadata(&calibration)?.len() as f64 / CALIBRATION_ROUNDS as f64;
    std::fs::remove_file(&calibration)?;
    let rounds = ((mb as f64 * 1e6 / per_round.max(1.0)) as u64).max(CALIBRATION_ROUNDS);
    println!("recording ~{mb} MB of --call-graph dwarf samples ({rounds} rounds of dwarf_cpp)");
    record(program, rounds, out)
}

/// The samples of a recording, from `perfdata info --json`.
/// How many functions the annotate rows show.
const ANNOTATED: usize = 20;

/// The `--percent-limit` that leaves the `n` hottest functions (with symbols: annotate
/// shows no other) of `file`: halfway between the `n`th's share and the next one's, from
/// `perfdata report`'s table.
fn hottest_limit(env: &Env, file: &Path, n: usize) -> Result<String> {
    let out = Command::new(&env.perfdata_bin)
        .args(["report", "--no-children", "-g", "none", "--sort", "dso,sym"])
        .arg(file)
        .output()
        .context("running perfdata report")?;
    if !out.status.success() {
        bail!(
            "perfdata report failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // `    33.85%  dwarf_cpp    [.] count_keys`; an address for a name has no symbol.
    let shares: Vec<f64> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.contains("[.] 0x") && !l.contains("[k] 0x"))
        .filter_map(|l| l.trim_start().split_once('%'))
        .filter_map(|(p, _)| p.parse::<f64>().ok())
        .collect();
    let (Some(last), Some(next)) = (shares.get(n - 1), shares.get(n)) else {
        bail!(
            "fewer than {} functions with samples in {}",
            n + 1,
            file.display()
        );
    };
    Ok(format!("{:.4}", (last + next) / 2.0))
}
