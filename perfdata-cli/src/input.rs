//! The input a command reads: `FILE` or `-i FILE`, `perf.data` when neither is given
//! (as perf's own commands).

use crate::error::{At, CliError};
use perfdata::Recording;
use std::path::{Path, PathBuf};

/// perf's default input.
const DEFAULT: &str = "perf.data";

/// The recording a command reads.
#[derive(clap::Args, Debug, Clone)]
pub struct Input {
    /// The recording: a perf.data file (either layout) or a `perf record --threads`
    /// directory [default: perf.data].
    #[arg(value_name = "FILE", help_heading = "Input")]
    file: Option<PathBuf>,
    /// The same as FILE, as perf spells it.
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        conflicts_with = "file",
        help_heading = "Input"
    )]
    input: Option<PathBuf>,
}

impl Input {
    /// The path given, or `perf.data`.
    pub fn path(&self) -> &Path {
        self.file
            .as_deref()
            .or(self.input.as_deref())
            .unwrap_or(Path::new(DEFAULT))
    }
}

/// Opens a recording and reads its header part; an error names the path.
pub fn open(path: &Path) -> Result<Recording, CliError> {
    let recording = Recording::open(path).at(path)?;
    recording.data().at(path)?;
    Ok(recording)
}

/// Several recordings (`export`): `FILE...` and `-i FILE` (repeatable), `perf.data`
/// when none is given.
#[derive(clap::Args, Debug, Clone)]
pub struct Inputs {
    /// The recordings [default: perf.data].
    #[arg(value_name = "FILE", help_heading = "Input")]
    files: Vec<PathBuf>,
    /// One more recording, as perf spells it (repeatable).
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        help_heading = "Input"
    )]
    input: Vec<PathBuf>,
}

impl Inputs {
    /// The paths given, or `perf.data`.
    pub fn paths(&self) -> Vec<PathBuf> {
        let all: Vec<PathBuf> = self.files.iter().chain(&self.input).cloned().collect();
        if all.is_empty() {
            vec![PathBuf::from(DEFAULT)]
        } else {
            all
        }
    }
}
