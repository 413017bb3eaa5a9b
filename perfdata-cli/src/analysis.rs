//! How every analysis command opens its recording: read it, open the analyzer with the
//! command's options, show progress on a terminal, and once the command's walk is done
//! say what the user should know about it (a jitdump not used, recorded symbols that
//! could not be read, SPLIT records that made no record).

use crate::error::{At, CliError};
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::path::Path;

/// Opens `path` for analysis with `options` and runs `walk` on it; `progress` names the
/// bar shown on a terminal (`None`: no bar, for a short look). The analyzer's notes are
/// printed on standard error after `walk`, whatever it returned.
pub fn analyze<T>(
    path: &Path,
    options: &AnalyzerOptions,
    progress: Option<&str>,
    walk: impl FnOnce(&mut Analyzer<'_>) -> Result<T, CliError>,
) -> Result<T, CliError> {
    analyze_with(path, options, progress, walk, false)
}

/// [`analyze`] for a command that reads one recording and then ends: the analyzer is not
/// freed. Its symbol tables and debug info are a great many small allocations (freeing
/// them took `script` a twentieth of its time); the process's exit returns them at once.
pub fn analyze_then_exit<T>(
    path: &Path,
    options: &AnalyzerOptions,
    progress: Option<&str>,
    walk: impl FnOnce(&mut Analyzer<'_>) -> Result<T, CliError>,
) -> Result<T, CliError> {
    analyze_with(path, options, progress, walk, true)
}

fn analyze_with<T>(
    path: &Path,
    options: &AnalyzerOptions,
    progress: Option<&str>,
    walk: impl FnOnce(&mut Analyzer<'_>) -> Result<T, CliError>,
    leave_to_exit: bool,
) -> Result<T, CliError> {
    let recording = crate::input::open(path)?;
    let mut analyzer = Analyzer::open(&recording, options).at(path)?;
    if let Some(label) = progress {
        crate::progress::show(&mut analyzer, label);
    }
    let result = walk(&mut analyzer);
    print_notes(path, &analyzer);
    if leave_to_exit {
        std::mem::forget(analyzer);
    }
    result
}

/// Prints the analyzer's notes on standard error, each naming the recording.
fn print_notes(path: &Path, analyzer: &Analyzer<'_>) {
    for n in analyzer.notes() {
        eprintln!("perfdata: {}: note: {n}", path.display());
    }
}
