//! `perfdata export FILE... --to parquet -o DIR`: many recordings into Parquet tables;
//! `perfdata export FILE --to pprof|speedscope|firefox -o OUT`: one recording for a profile viewer
//! ([`crate::commands::viewers`]).

use crate::error::{At, CliError, CliResult};
use crate::filter::FilterArgs;
use crate::input::Inputs;
use crate::symbols::SymbolArgs;
use perfdata_analysis::export::parquet::{self, ExportOptions};
use perfdata_analysis::Analyzer;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Many recordings into Parquet tables (samples, stacks, frames, threads, mmaps,
/// recordings) for DuckDB, DataFusion or Spark (schema and queries in
/// docs/parquet-export.md); or one recording for a profile viewer: pprof (`go tool
/// pprof`, Pyroscope, Parca), symbolized in-process.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  perfdata export *.data --to parquet -o profiles/ --symbolize --jobs 4\n  \
    duckdb -c \"SELECT function, sum(period) FROM 'profiles/samples/*/*.parquet' s \
    JOIN 'profiles/frames/*/*.parquet' f ON f.frame_id = s.leaf_frame GROUP BY 1 ORDER BY 2 DESC\"\n  \
    perfdata export perf.data --to pprof -o perf.pb.gz && go tool pprof -http=127.0.0.1:8080 perf.pb.gz\n  \
    perfdata export perf.data --to pprof --per-process -o profiles/\n  \
    perfdata export perf.data --to speedscope -o perf.speedscope.json\n  \
    perfdata export perf.data --to firefox -o perf.firefox.json   (profiler.firefox.com: Load a profile from file)"
)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Output format.
    #[arg(long, value_enum, default_value = "parquet")]
    to: ExportFormat,
    /// Output: a directory for parquet (`TABLE/recording=N/part-0.parquet` below it) and
    /// `--per-process` (`PID-COMM.pb.gz` in it), else a file.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: PathBuf,
    /// Resolve frames to functions, source files and lines (parquet; the viewers' formats
    /// always are).
    #[arg(long)]
    symbolize: bool,
    #[command(flatten)]
    viewer: super::viewers::ViewerArgs,
    /// Rows per Parquet row group.
    #[arg(long, default_value_t = 1 << 20)]
    row_group_size: usize,
    /// Recordings exported at once.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    filter: FilterArgs,
}

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Parquet tables.
    Parquet,
    /// pprof's profile.proto, gzip-compressed.
    Pprof,
    /// speedscope's JSON file format.
    Speedscope,
    /// The Firefox Profiler's processed profile format (JSON).
    Firefox,
}

pub fn run(args: Args) -> CliResult {
    if args.to != ExportFormat::Parquet {
        let files = args.inputs.paths();
        let [file] = files.as_slice() else {
            return Err(CliError::Usage(format!(
                "--to {} exports one recording ({} given)",
                format!("{:?}", args.to).to_lowercase(),
                files.len()
            )));
        };
        return super::viewers::run(
            file,
            args.to,
            &args.output,
            &args.viewer,
            &args.symbols,
            &args.filter,
        );
    }
    let files = args.inputs.paths();
    let out = &args.output;
    let opts = ExportOptions {
        symbolize: args.symbolize,
        row_group_size: args.row_group_size,
    };
    let symbols = opts.analyzer_options(&perfdata_analysis::AnalyzerOptions {
        filter: args.filter.filter()?,
        ..args.symbols.options(args.symbolize)
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
                let exported = (|| {
                    let recording = crate::input::open(path)?;
                    let mut analyzer = Analyzer::open(&recording, &symbols).at(path)?;
                    let mut parts = parquet::Directory::new(out);
                    let s = parquet::export(&mut analyzer, i as u32, &opts, &mut parts).at(path)?;
                    crate::symbols::print_notes(path, &analyzer);
                    Ok::<_, CliError>(s)
                })();
                match exported {
                    Ok(s) => {
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
