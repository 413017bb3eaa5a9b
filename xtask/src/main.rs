use anyhow::{bail, Result};
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  gen [--check]   regenerate perfdata/src/generated/ and docs/ from spec/, and docs/man/ from
                  perfdata-cli's command-line definition (--check: fail if stale)
  conformance [--refresh-oracle] [--keep DIR] [--only NAME]... [--corpus DIR] [--no-retry] [-v]
                  record every scenario with the system perf, compare perf's view with our
                  decode, print the table (exit non-zero on a failure not in
                  conformance/known-failures.txt); --refresh-oracle: store perf's output for
                  the committed fixtures instead (conformance/fixtures/perf-output/);
                  --only NAME: a scenario, a corpus file, `corpus`, `gperftools`,
                  `unwind` (every --call-graph dwarf scenario: checks 10 and 11), or
                  `sched` (the perf sched rows, check 18);
                  a live scenario that fails is recorded again once and fails only if
                  that recording fails too (both listed at the end); --no-retry: once
  bench [--file F] [--size-mb N] [--runs N] [--quick] [--out docs/performance.md]
        [--big-gb N [--big-only]] [--python | --python-only]
        [--tracepoints-mb N | --no-tracepoints] [--tracepoints-only]
                  the performance table: perfdata vs linux-perf-data 0.13, cp and perf script
                  on a recorded (or synthesized) file under target/bench/; --quick: a tiny
                  synthesized file, one run (keeps the suite running in CI); --big-gb N adds
                  the big-input table (report, collapse, convert, export on a synthesized N GB
                  file, peak memory); --big-only measures that table alone and, with --out,
                  replaces its section of the file; --python adds the Python table (the
                  release wheel's samples() into pandas vs perf script + pandas and vs the
                  Parquet export, Spark local[2]); --python-only measures it alone;
                  --sched-mb N (default 300): the perf sched table (perfdata sched
                  timehist/latency vs perf sched on a busy system-wide perf sched record of
                  N MB), --no-sched leaves it out, --sched-only measures it alone and, with
                  --out, replaces its section;
                  --tracepoints-mb N (default 250): the tracepoint table (tracepoints() into
                  pandas vs perf script + pandas, script -s syscall-counts-by-pid.py vs perf
                  script -s, the Parquet export, on a system-wide perf record of sched:* and
                  raw_syscalls:* of N MB), --no-tracepoints leaves it out,
                  --tracepoints-only measures it alone and, with --out, replaces its section
  fuzz [--target T]... [--seconds N] [--max-len BYTES] [--throughput] [--minimize] [--scrub]
       [--as-recipe FILE]...
                  seed fuzz/corpus/ (from fuzz/seeds/T.tar.gz, the fixtures, the findings) and
                  run the cargo-fuzz targets of fuzz/ (default: all, 60 s each; nightly if
                  rustup has it, else stable with RUSTC_BOOTSTRAP=1); prints executions and
                  coverage per target. Inputs up to 64 KiB (fewer for some targets: see
                  fuzz/README.md) unless --max-len; --throughput builds without
                  AddressSanitizer (long campaigns); --minimize writes each corpus, cut to the
                  inputs that cover its edges and without the ones holding bytes of
                  ../shared/corpus, to fuzz/seeds/T.tar.gz (6 MiB in all at most); --scrub
                  takes those inputs out of the archives as they are; --as-recipe replaces a
                  finding mutated from a corpus file by FILE.recipe, its edits of that file
  proto           (`cargo run -p xtask --features proto -- proto`) regenerate the pprof types,
                  perfdata-analysis/src/export/pprof/proto.rs, from perfdata-analysis/proto/ (needs protoc)";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = xtask::workspace_root();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["gen"] => {
            let written = xtask::write_all(&root)?;
            if written.is_empty() {
                println!("generated files are up to date");
            }
            for p in written {
                let did = if p.exists() { "wrote" } else { "removed" };
                println!("{did} {}", p.strip_prefix(&root).unwrap_or(&p).display());
            }
            Ok(())
        }
        ["gen", "--check"] => {
            let stale = xtask::stale_files(&root)?;
            if stale.is_empty() {
                println!("generated files are up to date");
                return Ok(());
            }
            for p in &stale {
                eprintln!("stale: {}", p.strip_prefix(&root).unwrap_or(p).display());
            }
            bail!(
                "{} generated file(s) do not match their sources: run `cargo xtask gen` and commit the result",
                stale.len()
            )
        }
        #[cfg(feature = "conformance")]
        ["conformance", rest @ ..] => conformance(&root, rest),
        #[cfg(feature = "fuzz")]
        ["fuzz", rest @ ..] => xtask::fuzz::run(&root, &xtask::fuzz::Options::parse(rest)?),
        #[cfg(feature = "proto")]
        ["proto"] => xtask::proto::run(&root),
        ["bench", rest @ ..] => xtask::bench::run(&root, &xtask::bench::Options::parse(rest)?),
        _ => bail!("{USAGE}"),
    }
}

#[cfg(feature = "conformance")]
fn conformance(root: &std::path::Path, args: &[&str]) -> Result<()> {
    let mut opts = conformance::LiveOptions::default();
    let mut refresh = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "--refresh-oracle" => refresh = true,
            "-v" | "--verbose" => opts.verbose = true,
            "--no-retry" => opts.no_retry = true,
            "--keep" => {
                opts.keep = Some(
                    it.next()
                        .ok_or_else(|| anyhow::anyhow!("--keep DIR"))?
                        .into(),
                )
            }
            "--corpus" => {
                opts.corpus = Some(
                    it.next()
                        .ok_or_else(|| anyhow::anyhow!("--corpus DIR"))?
                        .into(),
                )
            }
            "--only" => opts.only.push(
                it.next()
                    .ok_or_else(|| anyhow::anyhow!("--only NAME"))?
                    .to_string(),
            ),
            other => bail!("conformance: unknown argument {other:?}\n{USAGE}"),
        }
    }
    if refresh {
        let written = conformance::refresh_oracle(root)?;
        for p in &written {
            println!("wrote {}", p.strip_prefix(root).unwrap_or(p).display());
        }
        return Ok(());
    }
    if conformance::run_live(root, &opts)? {
        Ok(())
    } else {
        bail!("conformance: failures not listed in conformance/known-failures.txt")
    }
}
