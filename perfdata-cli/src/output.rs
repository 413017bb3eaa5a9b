//! Where a command writes: `-o PATH` for every command. A command that prints (dump,
//! report, collapse, info, check) writes standard output unless given `-o`; a file is
//! written beside its path and renamed into place once complete, so a failed or killed
//! run never leaves half a file where a good one was. The temporary file is named
//! `.<name>.perfdata-tmp.<random>` and locked while its run lives
//! ([`perfdata::write::temp_file_beside`]); a run that completes removes those of the same
//! output whose run was killed ([`perfdata::write::remove_stale_temp_files`]).

use crate::error::{At, CliError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `-o PATH` of a command that prints to standard output by default.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Output {
    /// Write to this file instead of standard output (`-` is standard output).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "PATH",
        help_heading = "Output"
    )]
    output: Option<PathBuf>,
}

impl Output {
    /// Opens the output.
    pub fn open(&self) -> Result<Out, CliError> {
        match self.output.as_deref() {
            None => Ok(Out::stdout()),
            Some(p) if p == Path::new("-") => Ok(Out::stdout()),
            Some(p) => Out::file(p),
        }
    }
}

/// An output being written: standard output, or a temporary file renamed to its path by
/// [`Out::finish`].
pub enum Out {
    Stdout(std::io::BufWriter<std::io::StdoutLock<'static>>),
    File {
        path: PathBuf,
        tmp: std::io::BufWriter<tempfile::NamedTempFile>,
    },
}

impl Out {
    pub fn stdout() -> Self {
        Out::Stdout(std::io::BufWriter::with_capacity(
            1 << 16,
            std::io::stdout().lock(),
        ))
    }

    /// A new file at `path`, written beside it (`.<name>.perfdata-tmp.<random>`).
    pub fn file(path: &Path) -> Result<Self, CliError> {
        let tmp = perfdata::write::temp_file_beside(path).at(path)?;
        Ok(Out::File {
            path: path.to_path_buf(),
            tmp: std::io::BufWriter::with_capacity(1 << 16, tmp),
        })
    }

    /// Flushes, and puts a file in place.
    pub fn finish(self) -> Result<(), CliError> {
        match self {
            Out::Stdout(mut w) => Ok(w.flush()?),
            Out::File { path, tmp } => {
                let tmp = tmp.into_inner().map_err(|e| e.into_error()).at(&path)?;
                perfdata::write::set_output_permissions(tmp.as_file(), &path).at(&path)?;
                if path.exists() {
                    // Replacing a good file: the new bytes reach the disk before the rename.
                    tmp.as_file().sync_all().at(&path)?;
                }
                tmp.persist(&path).map_err(|e| e.error).at(&path)?;
                perfdata::write::remove_stale_temp_files(&path);
                Ok(())
            }
        }
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Out::Stdout(w) => w.write(buf),
            Out::File { tmp, .. } => tmp.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self {
            Out::Stdout(w) => w.write_all(buf),
            Out::File { tmp, .. } => tmp.write_all(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Out::Stdout(w) => w.flush(),
            Out::File { tmp, .. } => tmp.flush(),
        }
    }
}
