//! The crate's one error type: a caller tells a damaged recording from a bad option, a
//! file that could not be written, or an input this analysis does not take.

use std::fmt;
use std::path::PathBuf;

/// What went wrong in an analysis or an export.
#[derive(Debug)]
#[non_exhaustive]
pub enum AnalysisError {
    /// The recording (or a file it names) is damaged or not what the format allows: the
    /// format crate's error, with its byte offset, record or feature, and field.
    Format(perfdata::Error),
    /// Reading or writing failed; `path` names the file when the failing call had one
    /// (an export writing to a caller's `Write` has none).
    Io {
        /// The file read or written.
        path: Option<PathBuf>,
        /// What the system said.
        source: std::io::Error,
    },
    /// An option's value is malformed or does not fit this recording.
    BadOption(BadOption),
    /// The recording is well formed, but holds nothing this analysis can work on, or
    /// something it does not do (a `--cpu` filter on events that do not sample the CPU,
    /// off-CPU time from a recording without switches).
    Unsupported(String),
    /// Building the Arrow tables failed (an internal contradiction: a bug).
    #[cfg(feature = "arrow")]
    Arrow(arrow_schema::ArrowError),
    /// Writing Parquet failed.
    #[cfg(feature = "parquet")]
    Parquet(parquet::errors::ParquetError),
    /// A worker thread of a parallel walk ended without a result (it panicked).
    WorkerLost,
}

/// An option's value that cannot be used, with the option it was given to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadOption {
    /// The option as a user spells it (`--time`, `--sort`), or the library field.
    pub option: String,
    /// What is wrong with its value.
    pub message: String,
}

impl BadOption {
    /// `option`'s value is wrong because of `message`.
    pub fn new(option: impl Into<String>, message: impl Into<String>) -> BadOption {
        BadOption {
            option: option.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for BadOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.option, self.message)
    }
}

impl std::error::Error for BadOption {}

impl AnalysisError {
    /// An input this analysis does not take, and why.
    #[cold]
    pub fn unsupported(why: impl Into<String>) -> AnalysisError {
        AnalysisError::Unsupported(why.into())
    }

    /// A failed read or write of `path`.
    #[cold]
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> AnalysisError {
        AnalysisError::Io {
            path: Some(path.into()),
            source,
        }
    }

    /// The output went away (a closed pipe): not a failure to report.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            AnalysisError::Io { source, .. } => source.kind() == std::io::ErrorKind::BrokenPipe,
            AnalysisError::Format(e) => matches!(
                e.kind(),
                perfdata::rt::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe
            ),
            _ => false,
        }
    }
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::Format(e) => e.fmt(f),
            AnalysisError::Io {
                path: Some(p),
                source,
            } => write!(f, "{}: {source}", p.display()),
            AnalysisError::Io { path: None, source } => source.fmt(f),
            AnalysisError::BadOption(b) => b.fmt(f),
            AnalysisError::Unsupported(why) => f.write_str(why),
            #[cfg(feature = "arrow")]
            AnalysisError::Arrow(e) => write!(f, "building the Arrow tables: {e}"),
            #[cfg(feature = "parquet")]
            AnalysisError::Parquet(e) => write!(f, "writing Parquet: {e}"),
            AnalysisError::WorkerLost => f.write_str("a worker of the parallel walk stopped"),
        }
    }
}

impl std::error::Error for AnalysisError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AnalysisError::Format(e) => Some(e),
            AnalysisError::Io { source, .. } => Some(source),
            AnalysisError::BadOption(b) => Some(b),
            #[cfg(feature = "arrow")]
            AnalysisError::Arrow(e) => Some(e),
            #[cfg(feature = "parquet")]
            AnalysisError::Parquet(e) => Some(e),
            AnalysisError::Unsupported(_) | AnalysisError::WorkerLost => None,
        }
    }
}

impl From<perfdata::Error> for AnalysisError {
    fn from(e: perfdata::Error) -> Self {
        AnalysisError::Format(e)
    }
}

impl From<std::io::Error> for AnalysisError {
    fn from(source: std::io::Error) -> Self {
        AnalysisError::Io { path: None, source }
    }
}

impl From<BadOption> for AnalysisError {
    fn from(b: BadOption) -> Self {
        AnalysisError::BadOption(b)
    }
}

#[cfg(feature = "arrow")]
impl From<arrow_schema::ArrowError> for AnalysisError {
    fn from(e: arrow_schema::ArrowError) -> Self {
        AnalysisError::Arrow(e)
    }
}

#[cfg(feature = "parquet")]
impl From<parquet::errors::ParquetError> for AnalysisError {
    fn from(e: parquet::errors::ParquetError) -> Self {
        AnalysisError::Parquet(e)
    }
}
