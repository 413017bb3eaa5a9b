//! `perfdata`: inspect, check, convert and analyse perf.data recordings.
//!
//! A thin shell over the libraries: each subcommand is a module of [`commands`] owning
//! its options and a `run` that calls `perfdata` (the format) or `perfdata_analysis`
//! and prints. Every command reads `FILE` or `-i FILE` (`perf.data` by default, as
//! perf) and writes where `-o` says.

mod commands;
mod error;
mod filter;
mod gperftools;
mod input;
mod output;
mod progress;
mod symbols;
mod values;

use clap::{Parser, Subcommand};
use commands::*;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "perfdata",
    version,
    about = "Read, check, convert and analyse perf.data recordings (every variant)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Check(check::Args),
    Dump(dump::Args),
    Convert(convert::Args),
    Report(report::Args),
    Collapse(collapse::Args),
    Flamegraph(flamegraph::Args),
    Diff(diff::Args),
    Offcpu(offcpu::Args),
    Stats(stats::Args),
    #[cfg(feature = "parquet")]
    Export(export::Args),
    Info(info::Args),
}

fn main() -> ExitCode {
    // glibc adapts its mmap and trim thresholds upwards as large buffers are freed; in a
    // long streaming run (`export`: Parquet page buffers, batch builders) freed memory
    // then stays in the heap and the resident set grows with the input (400 MB for a
    // 585 MB recording, with under 20 MB live). A fixed threshold turns the adaptation off:
    // 27 MB.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
    }
    let result = match Cli::parse().command {
        Command::Check(a) => check::run(a),
        Command::Dump(a) => dump::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Report(a) => report::run(a),
        Command::Collapse(a) => collapse::run(a),
        Command::Flamegraph(a) => flamegraph::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Offcpu(a) => offcpu::run(a),
        Command::Stats(a) => stats::run(a),
        #[cfg(feature = "parquet")]
        Command::Export(a) => export::run(a),
        Command::Info(a) => info::run(a),
    };
    match result {
        Ok(status) => status,
        // The reader of our output went away (`perfdata dump big.data | head`): what it
        // wanted was printed. Quiet, as `perf script | head`.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfdata: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    /// clap's own consistency checks over every subcommand's options (names used twice,
    /// conflicts naming no option): they otherwise panic only when that command runs.
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
