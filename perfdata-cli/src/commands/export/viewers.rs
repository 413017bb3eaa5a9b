//! `perfdata export FILE --to pprof|speedscope|firefox -o OUT`: one recording, symbolized in-process, in
//! the format of a profile viewer (the library's [`perfdata_analysis::export::sampled`] walk, laid
//! out by the format's module).

use crate::analysis::{analyze, analyze_then_exit};
use crate::error::{At, CliError, CliResult};
use crate::filter::FilterArgs;
use crate::output::Out;
use crate::symbols::SymbolArgs;
use perfdata_analysis::export::sampled::GatherOptions;
use perfdata_analysis::export::{firefox, pprof, speedscope};
use std::path::Path;
use std::process::ExitCode;

/// A profile viewer's format.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Viewer {
    /// pprof's profile.proto, gzip-compressed.
    Pprof,
    /// speedscope's JSON file format.
    Speedscope,
    /// The Firefox Profiler's processed profile format (JSON).
    Firefox,
}

/// The options of the viewers' formats (pprof's only, today).
#[derive(clap::Args, Debug)]
pub struct ViewerArgs {
    /// One profile per process, `PID-COMM.pb.gz` in the `-o` directory.
    #[arg(long, help_heading = PPROF)]
    per_process: bool,
    /// A `cpu` label on each sample.
    #[arg(long, help_heading = PPROF)]
    label_cpu: bool,
    /// A `time_ns` label on each sample (one pprof sample per perf sample).
    #[arg(long, help_heading = PPROF)]
    label_time: bool,
}

/// The help heading of pprof's options.
const PPROF: &str = "pprof";

/// Writes the recording at `path` to `output` in `format`.
pub fn run(
    path: &Path,
    format: Viewer,
    output: &Path,
    args: &ViewerArgs,
    symbols: &SymbolArgs,
    filter: &FilterArgs,
) -> CliResult {
    if args.per_process && format != Viewer::Pprof {
        return Err(CliError::usage("--per-process is for --to pprof"));
    }
    let mut options = symbols.options(true);
    options.filter = filter.filter()?;
    let opts = GatherOptions {
        inline: true,
        // The timeline views want every sample in time order.
        each_sample: args.label_time || format != Viewer::Pprof,
        cpu: args.label_cpu,
        markers: format == Viewer::Firefox,
    };
    let name = path
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    match format {
        Viewer::Speedscope => {
            // The samples stream to the output's profiles (spilled to a temporary file
            // past a budget): memory follows the frames and stacks only.
            let timeline = analyze(path, &options, Some("export"), |analyzer| {
                speedscope::gather(analyzer, &opts, &name).at(path)
            })?;
            let mut out = Out::file(output)?;
            timeline.write(&mut out).at(output)?;
            return out.finish().map(|()| ExitCode::SUCCESS);
        }
        Viewer::Firefox => {
            crate::heap::grow_in_large_steps();
            // The process ends after the output is written: the analyzer is not freed,
            // and the recording's pages are unmapped on another thread while this one
            // writes the JSON.
            let profile = analyze_then_exit(path, &options, Some("export"), |analyzer| {
                let mut profile = firefox::gather(analyzer, &opts, &name).at(path)?;
                sched_markers(analyzer, &mut profile).at(path)?;
                analyzer.recording().release_in_background();
                Ok(profile)
            })?;
            let mut out = Out::file(output)?;
            // `-o x.json.gz`: compressed, as the profiler loads it (and samply writes it).
            if output.extension().is_some_and(|e| e == "gz") {
                profile.write_gz(&mut out).at(output)?;
            } else {
                profile.write(&mut out).at(output)?;
            }
            return out.finish().map(|()| ExitCode::SUCCESS);
        }
        Viewer::Pprof => {}
    }
    let popts = pprof::PprofOptions {
        pid: None,
        cpu_label: args.label_cpu,
        time_label: args.label_time,
    };
    let profiles = analyze(path, &options, Some("export"), |analyzer| {
        pprof::gather(analyzer, &opts, &popts).at(path)
    })?;
    if !args.per_process {
        let mut out = Out::file(output)?;
        profiles.write(&mut out).at(output)?;
        out.finish()?;
        return Ok(ExitCode::SUCCESS);
    }
    std::fs::create_dir_all(output).at(output)?;
    for (pid, name) in profiles.processes() {
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let file = output.join(format!("{pid}-{safe}.pb.gz"));
        let mut out = Out::file(&file)?;
        profiles.write_process(pid, &mut out).at(&file)?;
        out.finish()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// With `sched:sched_switch` recorded, the scheduler's intervals (`perfdata sched
/// timehist`'s) as markers: each task off the CPU (its state, its waker) and running, and
/// a track per CPU.
fn sched_markers(
    analyzer: &mut perfdata_analysis::Analyzer<'_>,
    profile: &mut firefox::FirefoxProfile,
) -> Result<(), perfdata_analysis::AnalysisError> {
    use perfdata_analysis::analyses::sched::timehist::{self, TimehistOptions};
    if !analyzer.events.iter().any(|e| e == "sched:sched_switch") {
        return Ok(());
    }
    let opts = TimehistOptions {
        call_graph: false,
        ..TimehistOptions::default()
    };
    let mut intervals = vec![];
    timehist::timehist(
        analyzer,
        &opts,
        &mut std::io::sink(),
        Some(&mut |i: timehist::Interval| {
            intervals.push(firefox::SchedInterval {
                pid: i.pid,
                tid: i.tid,
                comm: i.comm,
                cpu: i.cpu,
                start: i.start,
                end: i.end,
                wait: i.wait,
                delay: i.delay,
                wait_state: i.wait_state,
                waker: i.waker_comm,
            })
        }),
    )?;
    profile.add_sched_intervals(intervals);
    Ok(())
}
