//! `perfdata diff OLD NEW`: two recordings compared, as `perf diff` compares them.

use crate::error::{At, CliError, CliResult};
use crate::output::Output;
use crate::symbols::SymbolArgs;
use perfdata_analysis::diff::{self, Compute, DiffKey, DiffOptions};
use perfdata_analysis::Analyzer;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Two recordings compared entry by entry (shared object and symbol by default), as
/// `perf diff` prints them: the baseline's share and the change in the new recording.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  perfdata diff perf.data.old perf.data\n  \
    perfdata diff old.data new.data --compute ratio --sort comm,dso,sym\n  \
    perfdata diff old.data new.data -c wdiff:1,2 --json")]
pub struct Args {
    /// The baseline recording [default: perf.data.old].
    #[arg(value_name = "OLD")]
    old: Option<PathBuf>,
    /// The recording compared with it [default: perf.data].
    #[arg(value_name = "NEW")]
    new: Option<PathBuf>,
    /// The computation: delta (change of the share, in points), delta-abs (the same,
    /// sorted by magnitude), ratio (new period / old), wdiff:W1,W2 (new × W2 − old × W1).
    #[arg(short = 'c', long, default_value = "delta-abs", value_name = "METHOD")]
    compute: String,
    /// The keys entries are matched by, among comm, pid, dso, sym.
    #[arg(short = 's', long, default_value = "dso,sym")]
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
    /// Accepted for perf's command line; the diff is always text unless --json.
    #[arg(long)]
    stdio: bool,
    /// The diff as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    output: Output,
}

pub fn run(args: Args) -> CliResult {
    let opts = DiffOptions {
        sort: DiffKey::parse(&args.sort).map_err(CliError::usage)?,
        compute: Compute::parse(&args.compute).map_err(CliError::usage)?,
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
        let o = s.spawn(|| profile(&old, &args.symbols, &opts.sort));
        let n = profile(&new, &args.symbols, &opts.sort);
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

fn profile(path: &Path, symbols: &SymbolArgs, keys: &[DiffKey]) -> Result<diff::Profile, CliError> {
    let recording = crate::input::open(path)?;
    let mut analyzer = Analyzer::open(&recording, &symbols.options(false)).at(path)?;
    diff::profile(&mut analyzer, keys).at(path)
}
