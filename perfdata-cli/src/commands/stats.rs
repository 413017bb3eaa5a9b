//! `perfdata stats`: readperf's statistics as four CSV files (or one JSON document).

use crate::analysis::analyze;
use crate::error::{At, CliError, CliResult};
use crate::filter::FilterArgs;
use crate::input::Input;
use crate::output::Out;
use crate::symbols::SymbolArgs;
use perfdata_analysis::analyses::stats;
use perfdata_analysis::AnalysisError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// readperf's statistics, as four CSV files or one JSON document.
///
/// For every event: stat.csv (records per type), overview.csv (every record in time
/// order), processes.csv and results.csv (per function, with source files).
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perfdata stats perf.data -o stats/\n  \
    perfdata stats perf.data --json > stats.json",
    &[],
))]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// Directory for the four CSV files (created if missing).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR",
        default_value = ".",
        help_heading = "Output"
    )]
    output: PathBuf,
    /// One JSON document on standard output instead of the CSV files.
    #[arg(long, help_heading = "Output")]
    json: bool,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    filter: FilterArgs,
}

pub fn run(args: Args) -> CliResult {
    let path = args.input.path();
    let mut options = args.symbols.options(true);
    options.filter = args.filter.filter()?;
    if args.json {
        let mut overview = vec![];
        let mut s = analyze(path, &options, Some("stats"), |analyzer| {
            stats::stats(analyzer, |row| {
                overview.push(row.clone());
                Ok::<_, AnalysisError>(())
            })
            .at(path)
        })?;
        s.overview = overview;
        let mut out = Out::stdout();
        serde_json::to_writer(&mut out, &s).map_err(std::io::Error::from)?;
        writeln!(out)?;
        out.finish()?;
        return Ok(ExitCode::SUCCESS);
    }
    let dir = &args.output;
    std::fs::create_dir_all(dir).at(dir)?;
    // Each table goes to a temporary file renamed into place once complete.
    let mut overview = Table::create(dir, "overview.csv")?;
    let mut overview_rows = 0u64;
    let s = analyze(path, &options, Some("stats"), |analyzer| {
        stats::stats(analyzer, |row| {
            overview_rows += 1;
            overview
                .csv
                .serialize(row)
                .map_err(|e| AnalysisError::io(&overview.path, e.into()))
        })
        .at(path)
    })?;
    if overview_rows == 0 {
        overview.header(stats::OVERVIEW_COLUMNS)?;
    }
    overview.finish()?;
    Table::create(dir, "stat.csv")?.write_all(stats::STAT_COLUMNS, &s.stat)?;
    Table::create(dir, "processes.csv")?.write_all(stats::PROCESS_COLUMNS, &s.processes)?;
    Table::create(dir, "results.csv")?.write_all(stats::RESULT_COLUMNS, &s.results)?;
    eprintln!(
        "wrote stat.csv, overview.csv, processes.csv, results.csv in {}",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// One CSV file being written.
struct Table {
    path: PathBuf,
    csv: csv::Writer<Out>,
}

impl Table {
    fn create(dir: &Path, name: &str) -> Result<Self, CliError> {
        let path = dir.join(name);
        let out = Out::file(&path)?;
        Ok(Table {
            csv: csv::Writer::from_writer(out),
            path,
        })
    }

    /// The header alone (serde writes it with the first row; a table without rows
    /// keeps it).
    fn header(&mut self, columns: &[&str]) -> Result<(), CliError> {
        let path = self.path.clone();
        self.csv
            .write_record(columns)
            .map_err(std::io::Error::from)
            .at(&path)
    }

    fn write_all<T: serde::Serialize>(
        mut self,
        columns: &[&str],
        rows: &[T],
    ) -> Result<(), CliError> {
        if rows.is_empty() {
            self.header(columns)?;
        }
        for r in rows {
            self.csv
                .serialize(r)
                .map_err(std::io::Error::from)
                .at(&self.path)?;
        }
        self.finish()
    }

    fn finish(self) -> Result<(), CliError> {
        let path = self.path;
        let out = self
            .csv
            .into_inner()
            .map_err(|e| e.into_error())
            .at(&path)?;
        out.finish()
    }
}
