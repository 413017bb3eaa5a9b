//! Writing a [`Builder`] (file or pipe layout, either byte order) through the streaming
//! sinks — one writer for the editing API and `perfdata convert` — and the atomic
//! replace every writer of a file goes through: [`save_checked`] writes to a temporary
//! file beside the target, checks that it reads back and renames it into place, so the
//! target (even when it is the input) is never left half-written, and never replaced by
//! a file we cannot read.

use super::encode::RecordEncoder;
use super::model::Builder;
use super::read_back::{read_back_file_carrying, Carried};
use super::sink::{FileSink, PipeSink, Sink};
use crate::container::Layout;
use crate::rt::{static_endian, Endianness, Error};
use std::io::{BufWriter, Seek, Write};
use std::path::Path;

/// How to write. `None` keeps what the input had.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// The output's byte order; `None` keeps the model's ([`Builder::endian`]).
    pub endian: Option<Endianness>,
}

impl WriteOptions {
    /// Writes in byte order `endian` (a builder step: `WriteOptions::default().endian(…)`).
    /// A model holding raw compressed records cannot change order: decompress it, or
    /// call [`Builder::set_endian`] before compressing.
    pub fn endian(mut self, endian: Endianness) -> Self {
        self.endian = Some(endian);
        self
    }
}

/// Runs `fill` on a temporary file beside `path`, re-reads what it wrote
/// ([`read_back_file`](super::read_back_file)) and renames it to `path`. On any error the temporary
/// file is removed and `path` is left as it was.
///
/// When `path` already exists, the new bytes are synced to disk before the rename, so
/// that not even a crash can leave a half-written file where a good one was; a new file
/// is not synced (like `cp`, the kernel writes it back in its own time).
pub fn save_with(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<&mut std::fs::File>) -> Result<(), Error>,
) -> Result<(), Error> {
    save_checked(path, |out| fill(out).map(|()| Carried::default()))
}

/// [`save_with`] where `fill` returns what it carried of its input's damage as it was (the
/// features it carried damaged: a `Vec<FeatureId>`; or a [`Carried`]): reading the output
/// back allows that.
pub fn save_checked<C: Into<Carried>>(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<&mut std::fs::File>) -> Result<C, Error>,
) -> Result<(), Error> {
    save_checked_as(path, fill)
}

/// [`save_checked`] with `fill`'s error type the caller's (an analysis writing a
/// rewritten recording fails with its own errors); the writer's own errors convert
/// into it.
pub fn save_checked_as<C: Into<Carried>, E: From<Error>>(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<&mut std::fs::File>) -> Result<C, E>,
) -> Result<(), E> {
    save_then(path, |out| fill(out).map(|c| Written::ReadBack(c.into())))
}

/// What is left to check of an output once `fill` has written it.
pub(crate) enum Written {
    /// Read it back, allowing what it carries of its input's damage.
    ReadBack(Carried),
    /// Nothing more: `fill` found it byte for byte equal to a file whose read-back gave
    /// this (a copy reads its input back while the kernel copies, then compares: see
    /// `convert`'s `copy_checked`).
    Checked(Result<(), Error>),
}

/// [`save_checked_as`] where `fill` says what is left to check.
pub(crate) fn save_then<E: From<Error>>(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<&mut std::fs::File>) -> Result<Written, E>,
) -> Result<(), E> {
    let mut tmp = temp_file_beside(path).map_err(Error::from)?;
    let written = {
        let mut out = BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        let written = fill(&mut out)?;
        out.flush().map_err(Error::from)?;
        written
    };
    Ok(finish_checked(path, tmp, written)?)
}

/// [`save_then`] after `fill`: the read-back check (unless done), the sync and the
/// rename.
fn finish_checked(
    path: &Path,
    tmp: tempfile::NamedTempFile,
    written: Written,
) -> Result<(), Error> {
    let replacing = path.exists();
    // The bytes go to disk while we read them back (one waits on the device, the other
    // uses the CPU); the rename needs both.
    let (checked, synced) = std::thread::scope(|scope| {
        let file = tmp.as_file();
        let sync = replacing.then(|| scope.spawn(move || file.sync_all()));
        let checked = match written {
            Written::ReadBack(carried) => read_back_file_carrying(tmp.path(), &carried),
            Written::Checked(result) => result,
        };
        (checked, sync.map_or(Ok(Ok(())), |s| s.join()))
    });
    checked.map_err(|e| {
        Error::other(format!(
            "the output does not read back, so {} was not written: {e}",
            path.display()
        ))
    })?;
    match synced {
        Ok(r) => r?,
        Err(_) => return Err(Error::other("the thread syncing the output panicked")),
    }
    set_output_permissions(tmp.as_file(), path)?;
    tmp.persist(path).map_err(|e| Error::from(e.error))?;
    remove_stale_temp_files(path);
    Ok(())
}

/// What every temporary output file beside `path` is named: `.<name>.perfdata-tmp.`
/// followed by random characters (hidden, and telling whose output it was).
fn temp_prefix(path: &Path) -> String {
    let name = path.file_name().map_or_else(
        || std::borrow::Cow::Borrowed("output"),
        |n| n.to_string_lossy(),
    );
    format!(".{name}.perfdata-tmp.")
}

/// The directory `path` is in (`.` for a bare name).
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A new temporary file beside `path`, for an output renamed to `path` once complete: it
/// is named `.<name>.perfdata-tmp.<random>` and holds an exclusive lock (`flock`) for as
/// long as it is open, which the kernel drops when the process ends however it ends
/// (even by SIGKILL). [`remove_stale_temp_files`] removes those nobody holds.
pub fn temp_file_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let prefix = temp_prefix(path);
    loop {
        let tmp = tempfile::Builder::new()
            .prefix(&prefix)
            .rand_bytes(8)
            .tempfile_in(dir_of(path))?;
        // A file system without locks: the file is still written (and never taken as
        // stale by a run that cannot lock it either).
        let _ = flock(tmp.as_file(), true);
        // A run cleaning up may have taken the file for a dead run's between its creation
        // and our lock, and removed it: then make another.
        if linked(tmp.as_file())? {
            return Ok(tmp);
        }
    }
}

/// Takes an exclusive `flock` on `file`: waiting for it when `wait`, else whether it was
/// free. (Elsewhere than on Unix there is no lock, and no file is ever taken as stale.)
fn flock(file: &std::fs::File, wait: bool) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        let op = if wait {
            libc::LOCK_EX
        } else {
            libc::LOCK_EX | libc::LOCK_NB
        };
        loop {
            // SAFETY: flock on a descriptor we own; no memory is passed.
            if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
                return Ok(true);
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EWOULDBLOCK) if !wait => return Ok(false),
                _ => return Err(e),
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(wait)
    }
}

/// Whether the file still has a name.
fn linked(file: &std::fs::File) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Ok(file.metadata()?.nlink() > 0)
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(true)
    }
}

/// Removes the temporary files of `path` ([`temp_file_beside`]) left by runs that were
/// killed before they completed: those whose lock nobody holds. Another run writing the
/// same output at the same time holds its lock, and its file is left alone. Best effort:
/// errors are ignored (what cannot be removed now is removed by a later run).
pub fn remove_stale_temp_files(path: &Path) {
    let prefix = temp_prefix(path);
    let dir = dir_of(path);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(&prefix) {
            continue;
        }
        let stale = dir.join(&name);
        let Ok(file) = std::fs::File::open(&stale) else {
            continue;
        };
        // Held: a live run's. Taken: its run is gone, and nobody can take it from us
        // before it is removed (a run that just created it sees it unlinked and makes
        // another).
        if matches!(flock(&file, false), Ok(true)) {
            let _ = std::fs::remove_file(&stale);
        }
    }
}

/// Gives a temporary output file (private, 0600) the permissions its final path should
/// have: those of the file it replaces, else what `open(path, O_CREAT, 0666)` would give
/// under the process umask (as `cp` to a new file).
pub fn set_output_permissions(tmp: &std::fs::File, path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let permissions = match std::fs::metadata(path) {
            Ok(m) => m.permissions(),
            Err(_) => {
                // 0666 minus the process umask (read without changing it: umask(2)
                // both sets and returns, so it is set back at once).
                // SAFETY: umask has no memory effects; the window where it is 0o022 only
                // matters to files created concurrently by other threads, which get the
                // common default.
                let mask = unsafe {
                    let m = libc::umask(0o022);
                    libc::umask(m);
                    m
                };
                std::fs::Permissions::from_mode(0o666 & !(mask as u32))
            }
        };
        tmp.set_permissions(permissions)?;
    }
    Ok(())
}

impl Builder<'_> {
    /// Writes the model to `path` through a temporary file in the same directory,
    /// checked and renamed into place once complete (so `path` may be the file the model
    /// was read from).
    pub fn save(&self, path: &Path, opts: WriteOptions) -> Result<(), Error> {
        let damaged = self.damaged_features();
        save_checked(path, |out| self.write_to(out, opts).map(|()| damaged))
    }

    /// Writes the model to `out` in its layout (file layout needs `Seek`: the header is
    /// written last, once the sizes are known).
    pub fn write_to<W: Write + Seek>(&self, out: &mut W, opts: WriteOptions) -> Result<(), Error> {
        let order = opts.endian.unwrap_or(self.endian);
        static_endian!(order, |e| match self.layout {
            Layout::File => {
                let enc = RecordEncoder::<_>::for_order(e, self);
                let sink = FileSink::begin(out, self, !self.features.is_empty(), enc)?;
                self.write_records(sink)
            }
            Layout::Pipe => {
                let sink = PipeSink::begin(out, RecordEncoder::for_order(e, self))?;
                self.write_records(sink)
            }
        })
    }

    /// Writes a pipe-layout model to any `Write` (a pipe, stdout).
    pub fn write_pipe<W: Write>(&self, out: &mut W, opts: WriteOptions) -> Result<(), Error> {
        if self.layout != Layout::Pipe {
            return Err(Error::other(
                "only a pipe-layout recording can be written as a stream; this one has the file layout (convert it to the pipe layout first)",
            ));
        }
        static_endian!(opts.endian.unwrap_or(self.endian), |e| {
            let sink = PipeSink::begin(out, RecordEncoder::for_order(e, self))?;
            self.write_records(sink)
        })
    }

    fn write_records(&self, mut sink: impl Sink) -> Result<(), Error> {
        for (i, item) in self.records.iter().enumerate() {
            sink.record(item)
                .map_err(|e| e.with_record(i as u64, item.ty.label()))?;
        }
        sink.finish(&self.features, &self.feature_table_slack)
    }
}
