//! `perfdata sched`: perf sched's views of a `perf sched record` recording — `timehist`,
//! `latency` and `map` — with perf 6.1's text, read without libtraceevent.

use crate::analysis::analyze;
use crate::error::{At, CliError, CliResult};
use crate::input::Input;
use crate::output::Output;
use perfdata_analysis::analyses::sched::latency::{self, LatencyKey, LatencyOptions};
use perfdata_analysis::analyses::sched::map::{self, MapOptions};
use perfdata_analysis::analyses::sched::parse_list;
use perfdata_analysis::analyses::sched::timehist::{self, TimehistOptions};
use perfdata_analysis::AnalyzerOptions;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The scheduler's story: perf sched's timehist, latency and map.
///
/// Reads recordings of `perf sched record` (or `perf record -e 'sched:*'`): the
/// `sched:sched_switch`, `sched_wakeup`/`sched_waking`, `sched_wakeup_new`,
/// `sched_migrate_task` and `sched_stat_runtime` tracepoints, through the event formats
/// the recording carries. The text is `perf sched`'s (perf 6.1) byte for byte.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  perf sched record -- ./prog\n  \
    perfdata sched timehist perf.data\n  \
    perfdata sched timehist -S -w --state perf.data\n  \
    perfdata sched latency --sort max perf.data\n  \
    perfdata sched map --compact perf.data")]
pub struct Args {
    #[command(subcommand)]
    view: View,
}

#[derive(clap::Subcommand, Debug)]
enum View {
    Timehist(TimehistArgs),
    Latency(LatencyArgs),
    Map(MapArgs),
}

/// Where kernel and user symbols come from (perf sched's options).
#[derive(clap::Args, Debug)]
struct Symbols {
    /// Kernel symbols from this kallsyms file.
    #[arg(long, value_name = "FILE", help_heading = "Symbols")]
    kallsyms: Option<PathBuf>,
    /// Kernel symbols from this vmlinux image.
    #[arg(short = 'k', long, value_name = "FILE", help_heading = "Symbols")]
    vmlinux: Option<PathBuf>,
    /// The recording machine's root file system, copied here.
    #[arg(long, value_name = "DIR", help_heading = "Symbols")]
    symfs: Option<PathBuf>,
}

impl Symbols {
    fn options(&self) -> AnalyzerOptions {
        AnalyzerOptions {
            kallsyms: self.kallsyms.clone(),
            vmlinux: self.vmlinux.clone(),
            symfs: self.symfs.clone(),
            ..Default::default()
        }
    }
}

/// Each context switch: wait time, scheduling delay, run time (perf sched timehist).
///
/// One line per switch-out: the task, the time it waited off the CPU before it ran,
/// how long of that it was runnable (wakeup to switch-in), and how long it ran; with
/// the call chain at switch-out when the samples carry one.
#[derive(clap::Args, Debug)]
struct TimehistArgs {
    #[command(flatten)]
    input: Input,
    /// Only the summary of run times per task.
    #[arg(short = 's', long)]
    summary: bool,
    /// The lines, then the summary.
    #[arg(short = 'S', long = "with-summary")]
    with_summary: bool,
    /// Show wakeup events.
    #[arg(short = 'w', long)]
    wakeups: bool,
    /// Show migration events.
    #[arg(short = 'M', long)]
    migrations: bool,
    /// A column per CPU.
    #[arg(short = 'V', long = "cpu-visual")]
    cpu_visual: bool,
    /// Show the task switched in.
    #[arg(short = 'n', long)]
    next: bool,
    /// Show the task's state when switched out.
    #[arg(long)]
    state: bool,
    /// Idle time only.
    #[arg(short = 'I', long = "idle-hist")]
    idle_hist: bool,
    /// Only these processes (`1,3-5`).
    #[arg(short = 'p', long = "pid", value_name = "PID[,PID...]")]
    pid: Option<String>,
    /// Only these threads.
    #[arg(short = 't', long = "tid", value_name = "TID[,TID...]")]
    tid: Option<String>,
    /// Only these CPUs.
    #[arg(short = 'C', long = "cpu", value_name = "CPU[,CPU...]")]
    cpu: Option<String>,
    /// Time span (`start,stop` in seconds).
    #[arg(long, value_name = "START,STOP")]
    time: Option<String>,
    /// Call chains, when the samples have them (the default).
    #[arg(short = 'g', long = "call-graph")]
    call_graph: bool,
    /// No call chains.
    #[arg(long = "no-call-graph", overrides_with = "call_graph")]
    no_call_graph: bool,
    /// At most this many functions of each call chain.
    #[arg(long = "max-stack", value_name = "N", default_value_t = 5)]
    max_stack: u32,
    /// The intervals as JSON lines (task, cpu, start, end, run, wait, delay, the states
    /// before and after, the waker) instead of the text.
    #[arg(long, help_heading = "Output")]
    json: bool,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    symbols: Symbols,
}

/// Per task: run time, switches, average and maximum delay (perf sched latency).
#[derive(clap::Args, Debug)]
struct LatencyArgs {
    #[command(flatten)]
    input: Input,
    /// Sort keys: runtime, switch, avg, max (and pid).
    #[arg(
        short = 's',
        long = "sort",
        value_name = "KEY[,KEY...]",
        default_value = "avg, max, switch, runtime"
    )]
    sort: String,
    /// A row per thread instead of per name.
    #[arg(short = 'p', long = "pids")]
    pids: bool,
    /// The CPU profiled.
    #[arg(short = 'C', long = "CPU", value_name = "N")]
    cpu: Option<u32>,
    /// The table as JSON.
    #[arg(long, help_heading = "Output")]
    json: bool,
    #[command(flatten)]
    output: Output,
}

/// Which task each CPU runs, at each switch (perf sched map).
#[derive(clap::Args, Debug)]
struct MapArgs {
    #[command(flatten)]
    input: Input,
    /// Only the CPUs seen, in the order they are.
    #[arg(long)]
    compact: bool,
    /// Only these CPUs.
    #[arg(long, value_name = "CPUS")]
    cpus: Option<String>,
    /// Highlight these pids (colours only a terminal; the text is the same).
    #[arg(long = "color-pids", value_name = "PIDS")]
    color_pids: Option<String>,
    /// Highlight these CPUs (colours only a terminal; the text is the same).
    #[arg(long = "color-cpus", value_name = "CPUS")]
    color_cpus: Option<String>,
    /// The lines as JSON lines (time, cpu, the task switched in and its letters, each
    /// CPU's task) instead of the text.
    #[arg(long, help_heading = "Output")]
    json: bool,
    #[command(flatten)]
    output: Output,
}

fn list(option: &str, text: &Option<String>) -> Result<Option<Vec<i64>>, CliError> {
    text.as_deref()
        .map(|t| parse_list(option, t))
        .transpose()
        .map_err(|e| CliError::usage(e.to_string()))
}

pub fn run(args: Args) -> CliResult {
    match args.view {
        View::Timehist(a) => run_timehist(a),
        View::Latency(a) => run_latency(a),
        View::Map(a) => run_map(a),
    }
}

fn run_timehist(a: TimehistArgs) -> CliResult {
    if a.summary && (a.wakeups || a.next) {
        return Err(CliError::usage("-s and -[n|w] are mutually exclusive"));
    }
    let time = match &a.time {
        Some(t) => timehist::parse_time(t).map_err(|e| CliError::usage(e.to_string()))?,
        None => (0, 0),
    };
    let opts = TimehistOptions {
        summary_only: a.summary,
        with_summary: a.with_summary,
        wakeups: a.wakeups,
        migrations: a.migrations,
        cpu_visual: a.cpu_visual,
        next: a.next,
        state: a.state,
        idle_hist: a.idle_hist,
        pids: list("--pid", &a.pid)?,
        tids: list("--tid", &a.tid)?,
        cpus: list("--cpu", &a.cpu)?,
        time,
        call_graph: !a.no_call_graph,
        max_stack: a.max_stack,
    };
    let path = a.input.path();
    let mut out = a.output.open()?;
    let json = a.json;
    analyze(
        path,
        &a.symbols.options(),
        Some("sched timehist"),
        |analyzer| {
            let notes = if json {
                let mut failed = None;
                let mut rows = |i: timehist::Interval| {
                    if failed.is_some() {
                        return;
                    }
                    let v = serde_json::json!({
                        "pid": i.pid, "tid": i.tid, "comm": i.comm, "cpu": i.cpu,
                        "state": i.state.to_string(), "start": i.start, "end": i.end,
                        "wait": i.wait, "delay": i.delay, "run": i.run,
                        "wait_state": i.wait_state.map(|c| c.to_string()),
                        "waker_pid": i.waker.map(|w| w.0), "waker_tid": i.waker.map(|w| w.1),
                        "waker": i.waker_comm,
                    });
                    if let Err(e) = writeln!(out, "{v}") {
                        failed = Some(e);
                    }
                };
                let notes =
                    timehist::timehist(analyzer, &opts, &mut std::io::sink(), Some(&mut rows))
                        .at(path)?;
                if let Some(e) = failed {
                    return Err(e.into());
                }
                notes
            } else {
                timehist::timehist(analyzer, &opts, &mut out, None).at(path)?
            };
            for n in notes.notes {
                eprintln!("{n}");
            }
            Ok(())
        },
    )?;
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn run_latency(a: LatencyArgs) -> CliResult {
    let sort = LatencyKey::parse_list(&a.sort).map_err(|e| CliError::usage(e.to_string()))?;
    let opts = LatencyOptions {
        sort,
        per_pid: a.pids,
        cpu: a.cpu,
    };
    let path = a.input.path();
    let result = analyze(
        path,
        &AnalyzerOptions::default(),
        Some("sched latency"),
        |analyzer| latency::latency(analyzer, &opts).at(path),
    )?;
    let mut out = a.output.open()?;
    if a.json {
        serde_json::to_writer_pretty(&mut out, &result).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        latency::render(&result, &mut out)?;
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// `sysconf(_SC_NPROCESSORS_CONF)` as glibc counts it: the `cpuN` directories of sysfs.
fn cpus_configured() -> Option<u32> {
    let n = std::fs::read_dir("/sys/devices/system/cpu")
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.strip_prefix("cpu")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    (n > 0).then_some(n as u32)
}

fn run_map(a: MapArgs) -> CliResult {
    // Checked as perf checks them; they change only colours.
    list("--color-pids", &a.color_pids)?;
    list("--color-cpus", &a.color_cpus)?;
    let opts = MapOptions {
        compact: a.compact,
        cpus: list("--cpus", &a.cpus)?,
        cpus_configured: cpus_configured(),
    };
    let path = a.input.path();
    let mut out = a.output.open()?;
    let json = a.json;
    analyze(
        path,
        &AnalyzerOptions::default(),
        Some("sched map"),
        |analyzer| {
            if !json {
                return map::map(analyzer, &opts, &mut out, None).at(path);
            }
            let mut failed = None;
            let mut each = |l: map::MapLine| {
                if failed.is_none() {
                    let r = serde_json::to_writer(&mut out, &l)
                        .map_err(std::io::Error::from)
                        .and_then(|()| writeln!(out));
                    failed = r.err();
                }
            };
            map::map(analyzer, &opts, &mut std::io::sink(), Some(&mut each)).at(path)?;
            match failed {
                Some(e) => Err(e.into()),
                None => Ok(()),
            }
        },
    )?;
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
