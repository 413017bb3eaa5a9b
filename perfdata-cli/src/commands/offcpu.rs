//! `perfdata offcpu`: time spent off the CPU (blocked, waiting, preempted), per thread
//! and per stack at switch-out; `--folded` for an off-CPU flame graph.

use crate::analysis::analyze;
use crate::error::{At, CliResult};
use crate::input::Input;
use crate::output::Output;
use crate::stacks::off_cpu_source;
use crate::symbols::SymbolArgs;
use perfdata_analysis::analyses::offcpu::{self, OffCpuOptions};
use std::io::Write;
use std::process::ExitCode;

/// Time spent off the CPU (blocked, waiting, preempted), per thread and stack.
///
/// For each thread, the time from each switch-out to its next switch-in, summed per
/// thread and per stack at switch-out. Reads `sched:sched_switch` samples (`perf record
/// -a -g -e sched:sched_switch`: the stack at switch-out is the sample's), else
/// context-switch records (`perf record --switch-events`: the stack is the thread's last
/// sample before it switched out).
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perf record -a -g -e sched:sched_switch -- ./prog\n  \
    perfdata offcpu perf.data\n  \
    perfdata offcpu perf.data --folded | inferno-flamegraph --countname ns > offcpu.svg\n  \
    perfdata offcpu perf.data --source switch --json",
    &[],
))]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// Where switches come from: sched-switch (the tracepoint's samples), switch
    /// (PERF_RECORD_SWITCH records), auto (the tracepoint when recorded, else records).
    #[arg(long, value_name = "auto|sched-switch|switch", default_value = "auto")]
    source: String,
    /// Folded stacks (`comm;root;…;leaf NANOSECONDS`) instead of the table: the input
    /// of an off-CPU flame graph.
    #[arg(long, conflicts_with = "json", help_heading = "Output")]
    folded: bool,
    /// With --folded: append `-PID/TID` to the command.
    #[arg(long, requires = "folded", help_heading = "Output")]
    tid: bool,
    /// The threads and stacks as JSON.
    #[arg(long, help_heading = "Output")]
    json: bool,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    symbols: SymbolArgs,
}

pub fn run(args: Args) -> CliResult {
    let source = off_cpu_source(&args.source)?;
    let path = args.input.path();
    let result = analyze(
        path,
        &args.symbols.options(false),
        Some("offcpu"),
        |analyzer| offcpu::off_cpu(analyzer, &OffCpuOptions { source }).at(path),
    )?;
    let mut out = args.output.open()?;
    if args.folded {
        perfdata_analysis::analyses::collapse::write_folded(
            &mut out,
            &offcpu::folded(&result, args.tid),
        )?;
    } else if args.json {
        serde_json::to_writer_pretty(&mut out, &result).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        out.write_all(offcpu::render(&result).as_bytes())?;
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
