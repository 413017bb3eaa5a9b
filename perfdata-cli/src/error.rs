//! The CLI's error: it keeps the kind of what failed (a library error with its location,
//! an I/O error with its path, a usage error), so that `main` can tell a closed output
//! pipe (quiet, status 0, as `perf script | head`) from a real failure.

use std::fmt;
use std::path::{Path, PathBuf};

/// What a command failed with.
#[derive(Debug)]
pub enum CliError {
    /// A format error; it names its file when it is about one.
    Perfdata(perfdata::Error),
    /// An analysis error, and the recording it is about (when it says no file itself).
    Analysis {
        path: Option<PathBuf>,
        error: perfdata_analysis::AnalysisError,
    },
    /// An I/O error about `path` (`None`: standard input or output).
    Io {
        path: Option<PathBuf>,
        error: std::io::Error,
    },
    /// Options that do not go together, or an input that cannot be used as asked.
    Usage(String),
    /// The command did what it could and reported what it could not (status 1).
    Incomplete(String),
    /// Several inputs failed (each on a line of its own).
    // Only the Parquet export reads several inputs.
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    Many(Vec<CliError>),
}

impl CliError {
    /// A usage error.
    pub fn usage(msg: impl Into<String>) -> Self {
        CliError::Usage(msg.into())
    }

    /// True when the output was a pipe its reader closed (`perfdata dump … | head`).
    pub fn is_broken_pipe(&self) -> bool {
        let io = match self {
            CliError::Io { error, .. } => Some(error),
            CliError::Perfdata(e) => match e.kind() {
                perfdata::rt::ErrorKind::Io(error) => Some(error),
                _ => None,
            },
            CliError::Analysis { error, .. } => return error.is_broken_pipe(),
            _ => None,
        };
        io.is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Perfdata(e) => write!(f, "{e}"),
            CliError::Analysis {
                path: Some(p),
                error,
            } => write!(f, "{}: {error}", p.display()),
            CliError::Analysis { path: None, error } => write!(f, "{error}"),
            CliError::Io {
                path: Some(p),
                error,
            } => write!(f, "{}: {error}", p.display()),
            CliError::Io { path: None, error } => write!(f, "{error}"),
            CliError::Usage(m) | CliError::Incomplete(m) => f.write_str(m),
            CliError::Many(all) => {
                for (i, e) in all.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\nperfdata: ")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
        }
    }
}

impl From<perfdata::Error> for CliError {
    fn from(e: perfdata::Error) -> Self {
        CliError::Perfdata(e)
    }
}

impl From<perfdata_analysis::AnalysisError> for CliError {
    fn from(error: perfdata_analysis::AnalysisError) -> Self {
        match error {
            // A format error names its file and place itself.
            perfdata_analysis::AnalysisError::Format(e) => CliError::Perfdata(e),
            error => CliError::Analysis { path: None, error },
        }
    }
}

impl From<perfdata_analysis::BadOption> for CliError {
    fn from(b: perfdata_analysis::BadOption) -> Self {
        CliError::Usage(b.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(error: std::io::Error) -> Self {
        CliError::Io { path: None, error }
    }
}

/// Naming the file an error is about.
pub trait At<T> {
    /// The error names `path` (a library error that already names a file keeps it:
    /// a `data.N` stream of a directory).
    fn at(self, path: &Path) -> Result<T, CliError>;
}

impl<T> At<T> for Result<T, perfdata::Error> {
    fn at(self, path: &Path) -> Result<T, CliError> {
        self.map_err(|e| {
            if e.file().is_some() {
                CliError::Perfdata(e)
            } else {
                CliError::Perfdata(e.in_file(path))
            }
        })
    }
}

impl<T> At<T> for Result<T, perfdata_analysis::AnalysisError> {
    fn at(self, path: &Path) -> Result<T, CliError> {
        use perfdata_analysis::AnalysisError;
        self.map_err(|error| match error {
            AnalysisError::Format(e) => Err::<(), _>(e).at(path).unwrap_err(),
            // A bad option is the user's, not the file's.
            AnalysisError::BadOption(b) => CliError::Usage(b.to_string()),
            // An I/O error that names its own file keeps it.
            AnalysisError::Io { path: Some(_), .. } => CliError::Analysis { path: None, error },
            error => CliError::Analysis {
                path: Some(path.to_path_buf()),
                error,
            },
        })
    }
}

impl<T> At<T> for Result<T, std::io::Error> {
    fn at(self, path: &Path) -> Result<T, CliError> {
        self.map_err(|error| CliError::Io {
            path: Some(path.to_path_buf()),
            error,
        })
    }
}

/// The result of a command: its exit status, or what it failed with.
pub type CliResult = Result<std::process::ExitCode, CliError>;
