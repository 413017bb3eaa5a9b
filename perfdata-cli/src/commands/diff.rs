//! `perfdata diff OLD NEW`: two recordings compared, as `perf diff` compares them.

use crate::analysis::analyze;
use crate::error::{At, CliError, CliResult};
use crate::filter::DiffFilterArgs;
use crate::output::Output;
use crate::symbols::SymbolArgs;
use perfdata_analysis::analyses::diff::{self, Compute, DiffKey, DiffOptions};
use perfdata_analysis::filter::SampleFilter;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Two recordings compared, as `perf diff` prints them.
///
/// Entry by entry (shared object and symbol by default): the baseline's share and the
/// change in the new recording.
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perfdata diff perf.data.old perf.data\n  \
    perfdata diff old.data new.data --compute ratio --sort comm,dso,sym\n  \
    perfdata diff old.data new.data -c wdiff:1,2 --json\n  \
    perfdata diff old.data new.data --comms myprog --time 10%/2",
    &[],
))]
pub struct Args {
    /// The baseline recording [default: perf.data.old].
    #[arg(value_name = "OLD", help_heading = "Input")]
    old: Option<PathBuf>,
    /// The recording compared with it [default: perf.data].
    #[arg(value_name = "NEW", help_heading = "Input")]
    new: Option<PathBuf>,
    /// The computation: delta (change of the share, in points), delta-abs (the same,
    /// sorted by magnitude), ratio (new period / old), wdiff:W1,W2 (new × W2 − old × W1).
    #[arg(short = 'c', long, default_value = "delta-abs", value_name = "METHOD")]
    compute: String,
    /// The keys entries are matched by, among comm, pid, dso, sym.
    #[arg(short = 's', long, default_value = "dso,sym", value_name = "KEY,...")]
    sort: String,
    /// Also the periods (`Base period`, `Period`).
    #[arg(short = 'p', long)]
    period: bool,
    /// Also the formula of each value.
    #[arg(short = 'F', long)]
    formula: bool,
    /// Only the baseline's entries that the new recording has too.
    #[arg(short = 'b', long)]
    baseline_only: bool,
    /// Percentages of every sample (`absolute`, perf's default: samples the filters
    /// hide still count in the totals) or of the samples shown (`relative`).
    #[arg(long, value_name = "relative|absolute", default_value = "absolute",
          value_parser = ["relative", "absolute"], hide_possible_values = true)]
    percentage: String,
    /// The diff as JSON.
    #[arg(long, help_heading = "Output")]
    json: bool,
    /// Accepted for perf's command line; the diff is always text unless --json.
    #[arg(long, help_heading = "Output")]
    stdio: bool,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    filter: DiffFilterArgs,
}

pub fn run(args: Args) -> CliResult {
    let sort = DiffKey::parse(&args.sort)?;
    let (old_filter, new_filter) = args.filter.filters()?;
    let opts = DiffOptions {
        elide: diff::elided(&old_filter, &sort),
        relative: args.percentage == "relative",
        sort,
        compute: Compute::parse(&args.compute)?,
        show_period: args.period,
        show_formula: args.formula,
        baseline_only: args.baseline_only,
    };
    // perf's defaults: one path is the new recording, perf.data.old the baseline.
    let (old, new) = match (&args.old, &args.new) {
        (Some(o), Some(n)) => (o.clone(), n.clone()),
        (Some(n), None) => (PathBuf::from("perf.data.old"), n.clone()),
        _ => (PathBuf::from("perf.data.old"), PathBuf::from("perf.data")),
    };
    // The two recordings are read at the same time (most of the time goes to reading
    // their symbol files).
    let (old_profile, new_profile) = std::thread::scope(|s| {
        let o = s.spawn(|| profile(&old, &args.symbols, old_filter, &opts));
        let n = profile(&new, &args.symbols, new_filter, &opts);
        let o = o.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        (o, n)
    });
    let (old_profile, new_profile) = (old_profile?, new_profile?);
    let diffs = diff::diff(&old_profile, &new_profile, &opts);
    let mut out = args.output.open()?;
    if args.json {
        serde_json::to_writer_pretty(&mut out, &diffs).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        out.write_all(diff::render(&diffs, &opts).as_bytes())?;
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn profile(
    path: &Path,
    symbols: &SymbolArgs,
    filter: SampleFilter,
    opts: &DiffOptions,
) -> Result<diff::Profile, CliError> {
    let mut options = symbols.options(false);
    options.filter = filter;
    // Two recordings are read at once: no progress bar. Absolute shares count what the
    // filters hide in the totals.
    analyze(path, &options, None, |analyzer| {
        diff::profile(analyzer, &opts.sort, !opts.relative).at(path)
    })
}
