//! One benchmark workload per process, so that `cargo xtask bench` can time it and read
//! its peak memory. Prints one machine-readable line (`key=value ...`).

use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: perfdata-bench <workload> FILE
workloads:
  scan FILE              map FILE and sum its u64 words (the floor: reading the bytes)
  ours FILE [--ordered]  perfdata: ip, time and callchain of every SAMPLE (file or time order)
  lpd FILE               linux-perf-data 0.13: the same work (it always sorts by time)
  synth OUT SIZE_MB      write a pipe-layout stream of about SIZE_MB MB like `perf record -g`'s
  gperftools FILE        perfdata: read a gperftools CPU profile (every record, counts per leaf)
  gperftools-synth OUT SIZE_MB  write a gperftools CPU profile of about SIZE_MB MB
  inferno-collapse-perf  inferno's collapse-perf: perf script's text on stdin, folded
                         stacks on stdout (the `inferno-collapse-perf` command)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["scan", file] => perfdata_bench::scan(Path::new(file))
            .map(|(bytes, sum)| format!("bytes={bytes} sum={sum:016x}")),
        ["ours", file] => perfdata_bench::ours(Path::new(file), false).map(|t| t.to_string()),
        ["ours", file, "--ordered"] => {
            perfdata_bench::ours(Path::new(file), true).map(|t| t.to_string())
        }
        ["lpd", file] => perfdata_bench::lpd(Path::new(file)).map(|t| t.to_string()),
        ["synth", out, size_mb] => synth(Path::new(out), size_mb),
        ["gperftools", file] => perfdata_bench::gperftools::read(Path::new(file)),
        ["gperftools-synth", out, size_mb] => size_mb
            .parse::<u64>()
            .map_err(|_| anyhow::anyhow!("SIZE_MB must be a whole number, not {size_mb:?}"))
            .and_then(|mb| perfdata_bench::gperftools::synth(Path::new(out), mb * 1_000_000))
            .map(|(records, samples)| format!("records={records} samples={samples}")),
        ["inferno-collapse-perf"] => inferno_collapse(),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(line) => {
            // A filter (inferno-collapse-perf) prints only its output.
            if !line.is_empty() {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// inferno's `collapse-perf` from standard input to standard output, as its command runs
/// it (default options).
fn inferno_collapse() -> anyhow::Result<String> {
    use inferno::collapse::Collapse;
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    inferno::collapse::perf::Folder::from(inferno::collapse::perf::Options::default())
        .collapse(stdin, &mut stdout)?;
    std::io::Write::flush(&mut stdout)?;
    Ok(String::new())
}

fn synth(out: &Path, size_mb: &str) -> anyhow::Result<String> {
    let size_mb: u64 = size_mb
        .parse()
        .map_err(|_| anyhow::anyhow!("SIZE_MB must be a whole number, not {size_mb:?}"))?;
    let file = std::fs::File::create(out)?;
    let mut out = std::io::BufWriter::new(file);
    let samples = perfdata_bench::synth::write_pipe_stream(&mut out, size_mb * 1_000_000)?;
    Ok(format!("samples={samples}"))
}
