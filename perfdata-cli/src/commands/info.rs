//! `perfdata info`: one screen about a recording.

use crate::analysis::analyze;
use crate::error::{At, CliResult};
use crate::input::Input;
use crate::output::Output;
use crate::symbols::SymbolArgs;
use perfdata_analysis::analyses::info;
use std::io::Write;
use std::process::ExitCode;

/// One screen about a recording.
///
/// Its producer, duration, events, losses, top processes and shared objects, compression
/// and size.
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perfdata info perf.data\n  perfdata info perf.data --json",
    &[],
))]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// How many processes and shared objects to list.
    #[arg(long, default_value_t = 5, value_name = "N")]
    top: usize,
    /// The summary as JSON.
    #[arg(long, help_heading = "Output")]
    json: bool,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    symbols: SymbolArgs,
}

pub fn run(args: Args) -> CliResult {
    let path = args.input.path();
    let summary = analyze(
        path,
        &args.symbols.options(false),
        Some("info"),
        |analyzer| info::info(analyzer, args.top).at(path),
    )?;
    let mut out = args.output.open()?;
    if args.json {
        serde_json::to_writer_pretty(&mut out, &summary).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        out.write_all(info::render(&summary).as_bytes())?;
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
