//! What goes into the folded stacks of `collapse` and `flamegraph` (the options they
//! share, and the walk that folds them), and the off-CPU weights that `report --off-cpu`
//! and `collapse --off-cpu` put on the stacks instead of sample periods.

use crate::analysis::analyze;
use crate::error::{At, CliError};
use crate::filter::FilterArgs;
use crate::symbols::{SymbolArgs, STACKS};
use perfdata_analysis::analyses::collapse;
use perfdata_analysis::analyses::offcpu::{self, OffCpuOptions, Source};
use perfdata_analysis::Analyzer;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// What goes into the stacks (`collapse` and `flamegraph`).
#[derive(clap::Args, Debug)]
pub struct StackArgs {
    /// Only this event (default: the first one sampled).
    #[arg(long, conflicts_with = "off_cpu", help_heading = STACKS)]
    pub event: Option<String>,
    /// Off-CPU stacks: each thread's time switched out, in nanoseconds, on the stack it
    /// switched out at (the off-CPU flame graph). From `sched:sched_switch` samples,
    /// else `--switch-events` records (the stack is the thread's last sample);
    /// `=sched-switch` or `=switch` chooses (see `perfdata offcpu`).
    #[arg(long, value_name = "SOURCE", num_args = 0..=1, default_missing_value = "auto",
          require_equals = true, help_heading = STACKS)]
    pub off_cpu: Option<String>,
    /// Add inlined functions (from DWARF debug info) as frames.
    #[arg(long, help_heading = STACKS)]
    pub inline: bool,
    #[command(flatten)]
    pub symbols: SymbolArgs,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// The folded stacks of the recording at `path`.
pub fn folded(
    path: &Path,
    stacks: &StackArgs,
    include_pid: bool,
    include_tid: bool,
) -> Result<BTreeMap<String, u64>, CliError> {
    let mut options = stacks.symbols.options(stacks.inline);
    options.filter = stacks.filter.filter()?;
    analyze(path, &options, Some("collapse"), |analyzer| {
        let off_cpu = match &stacks.off_cpu {
            Some(source) => Some(off_cpu_weights(analyzer, path, source)?),
            None => None,
        };
        let opts = collapse::CollapseOptions {
            event: stacks.event.clone(),
            include_pid,
            include_tid,
            inline: stacks.inline,
            off_cpu,
        };
        collapse::collapse(analyzer, &opts).at(path)
    })
}

/// The values of `offcpu --source` and of `--off-cpu=SOURCE`.
pub fn off_cpu_source(name: &str) -> Result<Option<Source>, CliError> {
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
pub fn off_cpu_weights(
    analyzer: &mut Analyzer<'_>,
    path: &Path,
    source_name: &str,
) -> Result<Arc<perfdata_analysis::analyses::weights::SampleWeights>, CliError> {
    let source = off_cpu_source(source_name)?;
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
    Ok(Arc::new(w))
}
