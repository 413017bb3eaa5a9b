//! `perfdata offcpu`: time spent off the CPU (blocked, waiting, preempted), per thread
//! and per stack at switch-out; `--folded` for an off-CPU flame graph.

use crate::error::{At, CliError, CliResult};
use crate::input::Input;
use crate::output::Output;
use crate::symbols::SymbolArgs;
use perfdata_analysis::analyses::offcpu::{self, OffCpuOptions, Source};
use perfdata_analysis::Analyzer;
use std::io::Write;
use std::process::ExitCode;

/// Off-CPU time: for each thread, the time from each switch-out to its next switch-in,
/// summed per thread and per stack at switch-out. Reads `sched:sched_switch` samples
/// (`perf record -a -g -e sched:sched_switch`: the stack at switch-out is the
/// sample's), else context-switch records (`perf record --switch-events`: the stack is
/// the thread's last sample before it switched out).
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  perf record -a -g -e sched:sched_switch -- ./prog\n  \
    perfdata offcpu perf.data\n  \
    perfdata offcpu perf.data --folded | inferno-flamegraph --countname ns > offcpu.svg\n  \
    perfdata offcpu perf.data --source switch --json"
)]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// Where switches come from: sched-switch (the tracepoint's samples), switch
    /// (PERF_RECORD_SWITCH records), auto (the tracepoint when recorded, else records).
    #[arg(long, value_name = "auto|sched-switch|switch", default_value = "auto")]
    source: String,
    /// Folded stacks (`comm;root;…;leaf NANOSECONDS`) instead of the table: the input
    /// of an off-CPU flame graph.
    #[arg(long, conflicts_with = "json")]
    folded: bool,
    /// With --folded: append `-PID/TID` to the command.
    #[arg(long, requires = "folded")]
    tid: bool,
    /// The threads and stacks as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    output: Output,
}

/// `--source`'s (and `--off-cpu`'s) values.
pub fn source(name: &str) -> Result<Option<Source>, CliError> {
    match name {
        "auto" => Ok(None),
        "sched-switch" => Ok(Some(Source::SchedSwitch)),
        "switch" => Ok(Some(Source::SwitchRecords)),
        other => Err(CliError::usage(format!(
            "unknown source `{other}` (auto, sched-switch, switch)"
        ))),
    }
}

/// For `report --off-cpu` and `collapse --off-cpu`: the off-CPU time of every thread
/// by the sample its stack comes from (says on standard error what has no stack).
pub fn weights(
    analyzer: &mut Analyzer<'_>,
    path: &std::path::Path,
    source_name: &str,
) -> Result<std::sync::Arc<perfdata_analysis::analyses::weights::SampleWeights>, CliError> {
    let source = source(source_name)?;
    let result = offcpu::off_cpu(analyzer, &OffCpuOptions { source }).at(path)?;
    let w = result.weights;
    if w.unattributed_ns > 0 {
        eprintln!(
            "perfdata: {}: {:.3} ms off the CPU left out: switched out before any sample of \
             the thread (no stack to put it on; `perfdata offcpu` shows it as [unknown])",
            path.display(),
            w.unattributed_ns as f64 / 1e6
        );
    }
    Ok(std::sync::Arc::new(w))
}

pub fn run(args: Args) -> CliResult {
    let source = source(&args.source)?;
    let path = args.input.path();
    let recording = args.input.open()?;
    let mut analyzer = Analyzer::open(&recording, &args.symbols.options(false)).at(path)?;
    crate::progress::show(&mut analyzer, "offcpu");
    let result = offcpu::off_cpu(&mut analyzer, &OffCpuOptions { source }).at(path)?;
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
