//! `perfdata collapse`: folded stacks for flame graphs.

use crate::error::CliResult;
use crate::input::Input;
use crate::output::Output;
use crate::stacks::{folded, StackArgs};
use perfdata_analysis::analyses::collapse;
use std::process::ExitCode;

/// Folded stacks for flame graphs, as `perf script | inferno-collapse-perf`.
///
/// One line per distinct stack, `comm;root;…;leaf count`: the lines
/// `perf script | inferno-collapse-perf` gives, the input of `inferno-flamegraph`,
/// `flamegraph.pl` and speedscope. The counts are periods (nanoseconds for the clock
/// events), or off-CPU nanoseconds with `--off-cpu`.
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perfdata collapse perf.data > stacks.folded\n  \
    perfdata collapse perf.data --event task-clock --include-pid\n  \
    perfdata collapse perf.data --comms myprog --time 10%/2\n  \
    perfdata collapse --off-cpu perf.data   (after perf record -a -g -e sched:sched_switch)",
    &[],
))]
pub struct Args {
    #[command(flatten)]
    input: Input,
    #[command(flatten)]
    stacks: StackArgs,
    /// Append the process id to the process name (inferno-collapse-perf's `--pid`;
    /// `--pid LIST` is perf's filter).
    #[arg(long, help_heading = "Output")]
    include_pid: bool,
    /// Append the process and thread ids to the process name (inferno's `--tid`).
    #[arg(long, help_heading = "Output")]
    include_tid: bool,
    #[command(flatten)]
    output: Output,
}

pub fn run(args: Args) -> CliResult {
    let folded = folded(
        args.input.path(),
        &args.stacks,
        args.include_pid,
        args.include_tid,
    )?;
    let mut out = args.output.open()?;
    collapse::write_folded(&mut out, &folded)?;
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
