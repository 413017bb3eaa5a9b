//! `perfdata report`: where the time went, as perf report's table.

use crate::error::{At, CliError, CliResult};
use crate::filter::FilterArgs;
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
    perfdata report perf.data --sort dso,sym -g\n  perfdata report perf.data --json\n  \
    perfdata report perf.data --comms myprog --time 0%-50%")]
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
    /// Percentages of every sample (`absolute`, perf's default: samples the filters
    /// hide still count in the totals) or of the samples shown (`relative`).
    #[arg(long, value_name = "relative|absolute", default_value = "absolute",
          value_parser = ["relative", "absolute"])]
    percentage: String,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    filter: FilterArgs,
    #[command(flatten)]
    output: Output,
}

pub fn run(args: Args) -> CliResult {
    let sort = report::SortKey::parse(&args.sort).map_err(CliError::usage)?;
    let path = args.input.path();
    let recording = args.input.open()?;
    let mut options = args.symbols.options(false);
    options.filter = args.filter.filter()?;
    let elide = report::elided(&options.filter, &sort);
    let mut analyzer = Analyzer::open(&recording, &options).at(path)?;
    crate::progress::show(&mut analyzer, "report");
    let opts = report::ReportOptions {
        callers: args.callers,
        relative: args.percentage == "relative",
        elide,
        time: args.filter.time.clone(),
        sort,
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
