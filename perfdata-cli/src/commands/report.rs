//! `perfdata report`: where the time went, as perf report's table.

use crate::error::{At, CliError, CliResult};
use crate::input::Input;
use crate::output::Output;
use crate::symbols::SymbolArgs;
use perfdata_analysis::{report, Analyzer};
use std::io::Write;
use std::process::ExitCode;

/// Where the time went: per event, the share of samples by command, shared object and
/// function, as `perf report --stdio -n --no-children` prints it.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  perfdata report perf.data\n  \
    perfdata report perf.data --sort dso,sym -g\n  perfdata report perf.data --json")]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// Columns, among comm, pid, tid, dso, sym.
    #[arg(long, default_value = "comm,dso,sym")]
    sort: String,
    /// Under each row, the call chains that led there (callers, nearest first).
    #[arg(short = 'g', long = "callers")]
    callers: bool,
    /// Accepted for perf's command line; the report is always text unless --json.
    #[arg(long)]
    stdio: bool,
    /// The report as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    output: Output,
}

pub fn run(args: Args) -> CliResult {
    let sort = report::SortKey::parse(&args.sort).map_err(CliError::usage)?;
    let path = args.input.path();
    let recording = args.input.open()?;
    let mut analyzer = Analyzer::open(&recording, &args.symbols.options(false)).at(path)?;
    crate::progress::show(&mut analyzer, "report");
    let opts = report::ReportOptions {
        sort,
        callers: args.callers,
    };
    let reports = report::report(&mut analyzer, &opts).at(path)?;
    let mut out = args.output.open()?;
    if args.json {
        serde_json::to_writer_pretty(&mut out, &reports).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        out.write_all(report::render(&reports, &opts).as_bytes())?;
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
