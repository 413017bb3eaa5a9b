//! `perfdata report`: where the time went, as perf report prints it.

use crate::analysis::analyze;
use crate::error::{At, CliError, CliResult};
use crate::filter::FilterArgs;
use crate::input::Input;
use crate::output::Output;
use crate::symbols::SymbolArgs;
use perfdata_analysis::analyses::report;
use std::io::Write;
use std::process::ExitCode;

/// Where the time went, as `perf report --stdio` prints it.
///
/// Per event, the share of the period by command, shared object and function — with what
/// each function called (Children) and its call graph when the recording has call chains
/// — in perf report's layout and with its option spellings.
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perfdata report perf.data\n  \
    perfdata report perf.data -g folded\n  \
    perfdata report perf.data --no-children -g caller,0.5\n  \
    perfdata report perf.data --no-children -g none --sort dso,sym -n\n  \
    perfdata report perf.data --inline\n  \
    perfdata report perf.data --no-children -g none --sort dso,srcline\n  \
    perfdata report perf.data --json\n  \
    perfdata report --off-cpu perf.data   (after perf record -a -g -e sched:sched_switch)",
    &[],
))]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// Columns, among comm, pid, tid, dso, sym, cpu, parent, srcline (the sample's
    /// `file:line` from the debug info; without one `function+offset`,
    /// `object[address]` or `??:0`, as perf).
    #[arg(
        short = 's',
        long,
        default_value = "comm,dso,sym",
        value_name = "KEY,..."
    )]
    sort: String,
    /// How to print the call graph under each entry (perf report's `-g`/`--call-graph`):
    /// `print_type,threshold[,print_limit],order,key,value`, that is
    /// graph|fractal|flat|folded|none, the threshold in percent, caller|callee, function,
    /// percent|period|count (default graph,0.5,caller; callee with --no-children). Where
    /// the stacks come from is `--stacks`.
    #[arg(short = 'g', long = "call-graph", alias = "graph", num_args = 0..=1,
          default_missing_value = "graph", value_name = "SPEC")]
    call_graph: Option<String>,
    /// The Children column: each entry with everything it called (the default when the
    /// recording has call chains).
    #[arg(long, overrides_with = "no_children")]
    children: bool,
    /// Only the Self column: each entry's own samples.
    #[arg(long)]
    no_children: bool,
    /// Leave out entries under this share of the period (percent); also the call
    /// graph's threshold.
    #[arg(long, value_name = "PERCENT")]
    percent_limit: Option<f64>,
    /// Percentages of every sample (`absolute`, perf's default: samples the filters
    /// hide still count in the totals) or of the samples shown (`relative`).
    #[arg(long, value_name = "relative|absolute", default_value = "absolute",
          value_parser = ["relative", "absolute"], hide_possible_values = true)]
    percentage: String,
    /// The Samples column.
    #[arg(short = 'n', long = "show-nr-samples")]
    show_nr_samples: bool,
    /// The `parent` key's pattern (a regular expression).
    #[arg(short = 'p', long, default_value = report::DEFAULT_PARENT, value_name = "REGEX")]
    parent: String,
    /// Functions inlined at an address as calls of their own in the call graph (and
    /// entries under Children), `name (inlined)`, from the debug info. As perf 6.1,
    /// only in chains unwound from stack copies (`perf record --call-graph dwarf`
    /// recordings). perf report adds them by default; perfdata only when asked (they
    /// cost a DWARF lookup per address).
    #[arg(long, overrides_with = "no_inline")]
    inline: bool,
    /// No inlined functions (the default).
    #[arg(long)]
    no_inline: bool,
    /// The srcline key's files with their paths as the debug info gives them, not
    /// their base names.
    #[arg(long)]
    full_source_path: bool,
    /// Off-CPU time instead of samples: the time each thread spent switched out,
    /// weighed in nanoseconds on the stack it switched out at (table `offcpu-time`).
    /// From `sched:sched_switch` samples, else `--switch-events` records (the stack is
    /// the thread's last sample); `=sched-switch` or `=switch` chooses (see `perfdata
    /// offcpu`).
    #[arg(long, value_name = "SOURCE", num_args = 0..=1, default_missing_value = "auto",
          require_equals = true)]
    off_cpu: Option<String>,
    /// The report as JSON.
    #[arg(long, help_heading = "Output")]
    json: bool,
    /// Accepted for perf's command line; the report is always text unless --json.
    #[arg(long, help_heading = "Output")]
    stdio: bool,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    filter: FilterArgs,
}

pub fn run(args: Args) -> CliResult {
    let sort = report::SortKey::parse(&args.sort)?;
    let call_graph = match &args.call_graph {
        Some(spec) => report::CallGraphOptions::parse(spec).map_err(|e| {
            // `-g FILE`: -g takes the next word, as perf's does.
            if std::path::Path::new(spec).exists() {
                CliError::usage(format!(
                    "{e} (-g took the file as its argument: put the file first, or write -g graph)"
                ))
            } else if ["fp", "dwarf", "auto"].contains(&spec.as_str()) {
                // perf record's `--call-graph dwarf`, or this command's spelling before
                // `--stacks`.
                CliError::usage(format!(
                    "{e} (-g/--call-graph says how to print the call graph, as perf report's; \
                     where user stacks come from is --stacks {spec})"
                ))
            } else {
                CliError::from(e)
            }
        })?,
        None => Some(report::CallGraphOptions::default()),
    };
    if let Some(p) = args.percent_limit {
        if !(p.is_finite() && p >= 0.0) {
            return Err(CliError::usage(format!(
                "--percent-limit {p}: not a percentage"
            )));
        }
    }
    if args.symbols.max_stack == 0 {
        return Err(CliError::usage("--max-stack 0 leaves no call"));
    }
    let filter = args.filter.filter()?;
    let opts = report::ReportOptions {
        elide: report::elided(&filter, &sort),
        relative: args.percentage == "relative",
        time: args.filter.time.clone(),
        sort,
        children: !args.no_children,
        call_graph,
        percent_limit: args.percent_limit,
        // perf's --max-stack: frames unwound, and calls of a chain kept.
        max_stack: args.symbols.max_stack,
        parent: args.parent,
        show_samples: args.show_nr_samples,
        off_cpu: None,
        inline: args.inline && !args.no_inline,
        full_source_path: args.full_source_path,
    };
    let path = args.input.path();
    let lines = opts.inline || opts.sort.contains(&report::SortKey::Srcline);
    let mut options = args.symbols.options(lines);
    options.filter = filter;
    let mut opts = opts;
    let reports = analyze(path, &options, Some("report"), |analyzer| {
        if let Some(source) = &args.off_cpu {
            opts.off_cpu = Some(crate::stacks::off_cpu_weights(analyzer, path, source)?);
        }
        report::report(analyzer, &opts).at(path)
    })?;
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
