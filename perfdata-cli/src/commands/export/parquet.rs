//! `perfdata export FILE... --to parquet -o DIR`: recordings into Parquet tables, several
//! at once (`--jobs`), each one partition of every table (`perfdata_analysis::export::parquet`).
//! The options are there in every build; the export only with the `parquet` feature.

#[cfg(feature = "parquet")]
use crate::error::{At, CliError, CliResult};
#[cfg(feature = "parquet")]
use crate::filter::FilterArgs;
#[cfg(feature = "parquet")]
use crate::symbols::SymbolArgs;
#[cfg(feature = "parquet")]
use perfdata_analysis::export::parquet::{self, ExportOptions};
#[cfg(feature = "parquet")]
use std::path::{Path, PathBuf};

/// The options of the Parquet export.
#[derive(clap::Args, Debug)]
// Read by the export only: a build without it takes them and refuses `--to parquet`.
#[cfg_attr(not(feature = "parquet"), allow(dead_code))]
pub struct ParquetArgs {
    /// Resolve frames to functions, source files and lines (the viewers' formats always
    /// are).
    #[arg(long, help_heading = PARQUET)]
    symbolize: bool,
    /// Rows per Parquet row group.
    #[arg(long, default_value_t = 1 << 20, value_name = "ROWS", help_heading = PARQUET)]
    row_group_size: usize,
    /// Recordings exported at once.
    #[arg(long, default_value_t = 1, value_name = "N", help_heading = PARQUET)]
    jobs: usize,
}

/// The help heading of the Parquet export's options.
const PARQUET: &str = "Parquet";

/// Exports `files` into the directory `out`; says on standard error what it wrote.
#[cfg(feature = "parquet")]
pub fn run(
    files: &[PathBuf],
    out: &Path,
    args: &ParquetArgs,
    symbols: &SymbolArgs,
    filter: &FilterArgs,
) -> CliResult {
    use std::process::ExitCode;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    let opts = ExportOptions {
        symbolize: args.symbolize,
        row_group_size: args.row_group_size,
    };
    let symbols = opts.analyzer_options(&perfdata_analysis::AnalyzerOptions {
        filter: filter.filter()?,
        ..symbols.options(args.symbolize)
    });
    std::fs::create_dir_all(out).at(out)?;
    let total: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            indicatif::ProgressDrawTarget::stderr()
        } else {
            indicatif::ProgressDrawTarget::hidden()
        },
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "export [{bar:40}] {bytes}/{total_bytes} {msg} ({eta} left)",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    let next = AtomicUsize::new(0);
    let errors: Mutex<Vec<CliError>> = Mutex::new(vec![]);
    let totals = Mutex::new((0u64, 0u64, 0u64));
    let started = std::time::Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..args.jobs.clamp(1, files.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                bar.set_message(path.display().to_string());
                // Several recordings at once: one bar for them all, not one each.
                let exported = crate::analysis::analyze(path, &symbols, None, |analyzer| {
                    let mut parts = parquet::Directory::new(out);
                    let mut s = parquet::export(analyzer, i as u32, &opts, &mut parts).at(path)?;
                    s.output_bytes +=
                        sched_intervals(analyzer, i as u32, &opts, &mut parts).at(path)?;
                    Ok(s)
                });
                match exported {
                    Ok(s) => {
                        for n in &s.notes {
                            bar.suspend(|| eprintln!("perfdata: {}: {n}", path.display()));
                        }
                        let mut t = totals.lock().expect("not poisoned");
                        t.0 += s.samples;
                        t.1 += s.input_bytes;
                        t.2 += s.output_bytes;
                        bar.inc(s.input_bytes);
                    }
                    Err(e) => errors.lock().expect("not poisoned").push(e),
                }
            });
        }
    });
    bar.finish_and_clear();
    let (samples, input, output) = *totals.lock().expect("not poisoned");
    let secs = started.elapsed().as_secs_f64();
    let mut errors = errors.into_inner().expect("not poisoned");
    eprintln!(
        "exported {} recording(s), {samples} samples: {:.1} MB in, {:.1} MB of Parquet ({:.0}% of the input) in {}, {:.1} s ({:.0} MB/s)",
        files.len() - errors.len(),
        input as f64 / 1e6,
        output as f64 / 1e6,
        if input == 0 { 0.0 } else { output as f64 * 100.0 / input as f64 },
        out.display(),
        secs,
        input as f64 / 1e6 / secs.max(1e-9),
    );
    match errors.len() {
        0 => Ok(ExitCode::SUCCESS),
        1 => Err(errors.remove(0)),
        _ => Err(CliError::Many(errors)),
    }
}

/// The `sched_intervals` table of a recording with `sched:sched_switch` samples
/// (`perfdata sched timehist`'s intervals); nothing for another recording. Its bytes.
#[cfg(feature = "parquet")]
fn sched_intervals(
    analyzer: &mut perfdata_analysis::Analyzer<'_>,
    recording: u32,
    opts: &ExportOptions,
    parts: &mut parquet::Directory,
) -> Result<u64, perfdata_analysis::AnalysisError> {
    use perfdata_analysis::analyses::sched::{table, timehist::TimehistOptions};
    if !analyzer.events.iter().any(|e| e == "sched:sched_switch") {
        return Ok(0);
    }
    let mut t = parquet::ExtraTable::create(parts, table::TABLE, recording, table::schema(), opts)?;
    let o = TimehistOptions {
        call_graph: false,
        ..TimehistOptions::default()
    };
    table::intervals(analyzer, &o, 1 << 16, &mut |b| t.write(b))?;
    t.finish(parts)
}
