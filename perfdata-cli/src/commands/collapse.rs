//! `perfdata collapse`: folded stacks for flame graphs.

use crate::error::{At, CliError, CliResult};
use crate::filter::FilterArgs;
use crate::input::Input;
use crate::output::Output;
use crate::symbols::SymbolArgs;
use perfdata_analysis::analyses::collapse;
use perfdata_analysis::Analyzer;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// Folded stacks (`comm;root;…;leaf count`) for flame graphs: the lines
/// `perf script | inferno-collapse-perf` gives.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  perfdata collapse perf.data > stacks.folded\n  \
    perfdata collapse perf.data --event task-clock --include-pid\n  \
    perfdata collapse perf.data --comms myprog --time 10%/2\n  \
    perfdata collapse --off-cpu perf.data   (after perf record -a -g -e sched:sched_switch)"
)]
pub struct Args {
    #[command(flatten)]
    input: Input,
    #[command(flatten)]
    stacks: StackArgs,
    /// Append the process id to the process name (inferno-collapse-perf's `--pid`;
    /// `--pid LIST` is perf's filter).
    #[arg(long)]
    include_pid: bool,
    /// Append the process and thread ids to the process name (inferno's `--tid`).
    #[arg(long)]
    include_tid: bool,
    #[command(flatten)]
    output: Output,
}

/// What goes into the stacks (shared with `flamegraph`).
#[derive(clap::Args, Debug)]
pub struct StackArgs {
    /// Only this event (default: the first one sampled).
    #[arg(long, conflicts_with = "off_cpu")]
    pub event: Option<String>,
    /// Off-CPU stacks: each thread's time switched out, in nanoseconds, on the stack it
    /// switched out at (the off-CPU flame graph). From `sched:sched_switch` samples,
    /// else `--switch-events` records (the stack is the thread's last sample);
    /// `=sched-switch` or `=switch` chooses (see `perfdata offcpu`).
    #[arg(long, value_name = "SOURCE", num_args = 0..=1, default_missing_value = "auto",
          require_equals = true)]
    pub off_cpu: Option<String>,
    /// Add inlined functions (from DWARF debug info) as frames.
    #[arg(long)]
    pub inline: bool,
    #[command(flatten)]
    pub symbols: SymbolArgs,
    #[command(flatten)]
    pub filter: FilterArgs,
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

/// The folded stacks of the recording at `path`.
pub fn folded(
    path: &Path,
    stacks: &StackArgs,
    include_pid: bool,
    include_tid: bool,
) -> Result<BTreeMap<String, u64>, CliError> {
    let recording = crate::input::open(path)?;
    let mut options = stacks.symbols.options(stacks.inline);
    options.filter = stacks.filter.filter()?;
    let mut analyzer = Analyzer::open(&recording, &options).at(path)?;
    crate::progress::show(&mut analyzer, "collapse");
    let off_cpu = match &stacks.off_cpu {
        Some(source) => Some(crate::commands::offcpu::weights(
            &mut analyzer,
            path,
            source,
        )?),
        None => None,
    };
    let opts = collapse::CollapseOptions {
        event: stacks.event.clone(),
        include_pid,
        include_tid,
        inline: stacks.inline,
        off_cpu,
    };
    let folded = collapse::collapse(&mut analyzer, &opts).at(path)?;
    crate::symbols::print_notes(path, &analyzer);
    Ok(folded)
}
