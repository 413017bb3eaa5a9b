//! `perfdata flamegraph`: a flame graph (SVG) through the inferno crate.

use crate::commands::collapse::{folded, StackArgs};
use crate::error::{At, CliError, CliResult};
use crate::input::Input;
use crate::output::Out;
use std::path::PathBuf;
use std::process::ExitCode;

/// A flame graph (SVG, through the inferno crate).
#[derive(clap::Args, Debug)]
#[command(after_help = "Example:\n  perfdata flamegraph perf.data -o flame.svg")]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// The SVG file to write (`-`: standard output).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "PATH",
        default_value = "flamegraph.svg"
    )]
    output: PathBuf,
    /// Title of the graph.
    #[arg(long)]
    title: Option<String>,
    #[command(flatten)]
    stacks: StackArgs,
}

pub fn run(args: Args) -> CliResult {
    let path = args.input.path();
    let folded = folded(path, &args.stacks, false, false)?;
    if folded.is_empty() {
        return Err(CliError::usage(format!(
            "{}: no samples to draw",
            path.display()
        )));
    }
    let lines: Vec<String> = folded.iter().map(|(s, c)| format!("{s} {c}")).collect();
    let mut opts = inferno::flamegraph::Options::default();
    if let Some(t) = args.title {
        opts.title = t;
    }
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
