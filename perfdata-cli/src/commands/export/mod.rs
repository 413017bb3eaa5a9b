//! `perfdata export`: recordings into Parquet tables ([`parquet`]), or one recording into
//! a profile viewer's format ([`viewers`]). The options of every format are here, in any
//! build; only the Parquet export itself needs the `parquet` feature.

mod parquet;
mod viewers;

use crate::error::{CliError, CliResult};
use crate::filter::FilterArgs;
use crate::input::Inputs;
use crate::symbols::SymbolArgs;
use std::path::PathBuf;
use viewers::Viewer;

/// Recordings into Parquet tables, or one into a profile viewer's format.
///
/// `--to parquet` (the default): many recordings into eight Parquet tables (samples,
/// stacks, stack_frames, frames, threads, comms, mmaps, recordings), one partition per
/// recording, for DuckDB, DataFusion or Spark (schema and queries in
/// docs/parquet-export.md).
///
/// `--to pprof|speedscope|firefox`: one recording, symbolized in-process, for a profile
/// viewer: pprof (`go tool pprof`, Pyroscope, Parca), speedscope (speedscope.app) or the
/// Firefox Profiler (profiler.firefox.com).
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perfdata export *.data --to parquet -o profiles/ --symbolize --jobs 4\n  \
    duckdb -c \"SELECT function, sum(period) FROM 'profiles/samples/*/*.parquet' s\n    \
    JOIN 'profiles/frames/*/*.parquet' f ON f.frame_id = s.leaf_frame GROUP BY 1 ORDER BY 2 DESC\"\n  \
    perfdata export perf.data --to pprof -o perf.pb.gz\n  \
    go tool pprof -http=127.0.0.1:8080 perf.pb.gz\n  \
    perfdata export perf.data --to pprof --per-process -o profiles/\n  \
    perfdata export perf.data --to speedscope -o perf.speedscope.json\n  \
    perfdata export perf.data --to firefox -o perf.firefox.json.gz\n  \
    (then on profiler.firefox.com: Load a profile from file)",
    &["TMPDIR                 where --to speedscope keeps samples past its memory budget"],
))]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Output format.
    #[arg(
        long,
        value_enum,
        default_value = "parquet",
        value_name = "FORMAT",
        help_heading = "Output"
    )]
    to: ExportFormat,
    /// Output: a directory for parquet (`TABLE/recording=N/part-0.parquet` below it) and
    /// `--per-process` (`PID-COMM.pb.gz` in it), else a file.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "PATH",
        help_heading = "Output"
    )]
    output: PathBuf,
    #[command(flatten)]
    parquet: parquet::ParquetArgs,
    #[command(flatten)]
    viewer: viewers::ViewerArgs,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    filter: FilterArgs,
}

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Parquet tables (a build without the `parquet` feature refuses it).
    Parquet,
    /// pprof's profile.proto, gzip-compressed.
    Pprof,
    /// speedscope's JSON file format.
    Speedscope,
    /// The Firefox Profiler's processed profile format (JSON; gzip-compressed when the
    /// output's name ends in `.gz`).
    Firefox,
}

pub fn run(args: Args) -> CliResult {
    let files = args.inputs.paths();
    let viewer = match args.to {
        ExportFormat::Parquet => {
            #[cfg(feature = "parquet")]
            return parquet::run(
                &files,
                &args.output,
                &args.parquet,
                &args.symbols,
                &args.filter,
            );
            #[cfg(not(feature = "parquet"))]
            return Err(CliError::usage(
                "--to parquet: this perfdata was built without the `parquet` feature \
                 (`cargo install` it with the default features); --to pprof, speedscope \
                 and firefox are there",
            ));
        }
        ExportFormat::Pprof => Viewer::Pprof,
        ExportFormat::Speedscope => Viewer::Speedscope,
        ExportFormat::Firefox => Viewer::Firefox,
    };
    let [file] = files.as_slice() else {
        return Err(CliError::Usage(format!(
            "--to {} exports one recording ({} given)",
            format!("{:?}", args.to).to_lowercase(),
            files.len()
        )));
    };
    viewers::run(
        file,
        viewer,
        &args.output,
        &args.viewer,
        &args.symbols,
        &args.filter,
    )
}
