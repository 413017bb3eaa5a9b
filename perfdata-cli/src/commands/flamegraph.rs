//! `perfdata flamegraph`: a flame graph (SVG) through the inferno crate.

use crate::error::{At, CliError, CliResult};
use crate::input::Input;
use crate::output::Out;
use crate::stacks::{folded, StackArgs};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A flame graph (SVG), or the differential flame graph of two recordings.
///
/// The folded stacks of `perfdata collapse` drawn by the inferno crate (what
/// `inferno-flamegraph` draws). With `--diff OLD NEW`, the differential flame graph of
/// two recordings: the new one's stacks, coloured red where they grew and blue where they
/// shrank.
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perfdata flamegraph perf.data -o flame.svg\n  \
    perfdata flamegraph --diff old.data new.data -o diff.svg\n  \
    perfdata flamegraph --off-cpu perf.data -o offcpu.svg",
    &[],
))]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// The SVG file to write (`-`: standard output).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "PATH",
        default_value = "flamegraph.svg",
        help_heading = "Output"
    )]
    output: PathBuf,
    /// Title of the graph.
    #[arg(long, help_heading = "Output")]
    title: Option<String>,
    /// A differential flame graph of two recordings, OLD then NEW.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with_all = ["file", "input"],
          help_heading = "Input")]
    diff: Option<Vec<PathBuf>>,
    /// With --diff: scale OLD's counts to NEW's total first (differing load or length).
    #[arg(long, requires = "diff", help_heading = "Input")]
    normalize: bool,
    #[command(flatten)]
    stacks: StackArgs,
}

pub fn run(args: Args) -> CliResult {
    let lines = match &args.diff {
        Some(paths) => differential(&paths[0], &paths[1], &args.stacks, args.normalize)?,
        None => {
            let path = args.input.path();
            let folded = drawable(path, &args.stacks)?;
            folded.iter().map(|(s, c)| format!("{s} {c}")).collect()
        }
    };
    let mut opts = inferno::flamegraph::Options::default();
    if let Some(t) = args.title {
        opts.title = t;
    }
    // The counts are periods: nanoseconds for the clock events, events otherwise (not
    // "samples": three 1 ms cpu-clock samples weigh 3,000,000).
    let weighed = match &args.diff {
        Some(paths) => weighed_event(&paths[1], &args.stacks)?,
        None => weighed_event(args.input.path(), &args.stacks)?,
    };
    opts.count_name = count_name(weighed.as_deref()).to_string();
    let mut out = if args.output.as_os_str() == "-" {
        Out::stdout()
    } else {
        Out::file(&args.output)?
    };
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut out)
        .map_err(|e| std::io::Error::other(e.to_string()))
        .at(&args.output)?;
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// The event the folded stacks weigh: `--event`, else the first one sampled (as
/// `collapse` chooses).
fn weighed_event(path: &Path, stacks: &StackArgs) -> Result<Option<String>, CliError> {
    if stacks.off_cpu.is_some() {
        return Ok(Some(
            perfdata_analysis::analyses::report::OFF_CPU_EVENT.to_string(),
        ));
    }
    if let Some(e) = &stacks.event {
        return Ok(Some(e.clone()));
    }
    let recording = crate::input::open(path)?;
    let mut analyzer =
        perfdata_analysis::Analyzer::open(&recording, &Default::default()).at(path)?;
    let mut first = None;
    analyzer
        .run(Default::default(), |_, item| {
            first = item.sample.as_ref().map(|s| s.event);
            Ok::<_, perfdata_analysis::AnalysisError>(first.is_none())
        })
        .at(path)?;
    Ok(first.and_then(|i| analyzer.events.get(i).cloned()))
}

/// What a flame graph's counts are, for an event name (`cpu-clock:u` → ns).
fn count_name(event: Option<&str>) -> &'static str {
    let base = event.map(|e| e.split(':').next().unwrap_or(e));
    match base {
        Some("cpu-clock" | "task-clock" | perfdata_analysis::analyses::report::OFF_CPU_EVENT) => {
            "ns"
        }
        _ => "events",
    }
}

/// The folded stacks of `path`; none is an error.
fn drawable(path: &Path, stacks: &StackArgs) -> Result<BTreeMap<String, u64>, CliError> {
    let folded = folded(path, stacks, false, false)?;
    if folded.is_empty() {
        return Err(CliError::usage(format!(
            "{}: no samples to draw",
            path.display()
        )));
    }
    Ok(folded)
}

/// `stack OLD_COUNT NEW_COUNT` lines (inferno's differential folding of both recordings'
/// folded stacks), which inferno's flame graph draws in red and blue.
fn differential(
    old: &Path,
    new: &Path,
    stacks: &StackArgs,
    normalize: bool,
) -> Result<Vec<String>, CliError> {
    let text = |path: &Path| -> Result<Vec<u8>, CliError> {
        let mut buf = vec![];
        perfdata_analysis::analyses::collapse::write_folded(&mut buf, &drawable(path, stacks)?)?;
        Ok(buf)
    };
    let (before, after) = (text(old)?, text(new)?);
    let opts = inferno::differential::Options {
        normalize,
        strip_hex: false,
    };
    let mut out = vec![];
    inferno::differential::from_readers(opts, &before[..], &after[..], &mut out)?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_string)
        .collect())
}
