//! Opening a path: a perf.data file (file or saved pipe layout) or a `perf record
//! --threads` directory (`data` with the header, `data.N` with per-thread record streams).

use super::file::{Damage, Origin, PerfData};
use super::mapped::MappedFile;
use super::session::RecordCtx;
use super::stream::RawRecord;
use crate::rt::Error;
use std::path::{Path, PathBuf};

/// What [`Recording::for_each_record`] calls for each record; it returns `false` to stop.
pub type RecordVisitor<'f> =
    dyn FnMut(Place, Origin, RawRecord<'_>, &RecordCtx) -> Result<bool, Error> + 'f;

/// A recording on disk.
pub struct Recording {
    path: PathBuf,
    header: MappedFile,
    /// `data.N` streams of a directory, in N order.
    streams: Vec<(PathBuf, MappedFile)>,
}

/// Where a record of a [`Recording`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// In the main file (its data section, or the whole stream in pipe layout).
    Main,
    /// In the `index`-th `data.N` stream of a directory (`Recording::stream_paths`).
    Stream(usize),
}

impl Recording {
    /// Opens a file, or a directory written by `perf record --threads`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        if !path.is_dir() {
            return Ok(Recording {
                header: MappedFile::open(&path)?,
                path,
                streams: vec![],
            });
        }
        if !path.join("data").is_file() {
            return Err(Error::other(format!(
                "{}: not a perf.data file or a --threads directory (a directory needs a `data` file)",
                path.display()
            )));
        }
        let header = MappedFile::open(&path.join("data"))?;
        let io = |e: std::io::Error| Error::from(e).in_file(&path);
        let mut numbered = vec![];
        for entry in std::fs::read_dir(&path).map_err(io)? {
            let p = entry.map_err(io)?.path();
            let n = p
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("data."))
                .and_then(|n| n.parse::<u64>().ok());
            if let Some(n) = n {
                numbered.push((n, p));
            }
        }
        numbered.sort();
        let mut streams = vec![];
        for (_, p) in numbered {
            let bytes = MappedFile::open(&p)?;
            streams.push((p, bytes));
        }
        Ok(Recording {
            path,
            header,
            streams,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True for a `--threads` directory.
    pub fn is_directory(&self) -> bool {
        self.path.is_dir()
    }

    /// The `data.N` files of a directory, in N order.
    pub fn stream_paths(&self) -> impl Iterator<Item = &Path> {
        self.streams.iter().map(|(p, _)| p.as_path())
    }

    /// The bytes of the `index`-th `data.N` stream (`Recording::stream_paths` order).
    pub fn stream_bytes(&self, index: usize) -> &[u8] {
        self.streams[index].1.bytes()
    }

    /// The bytes of the `data.N` files of a directory, in N order.
    pub fn streams_bytes(&self) -> impl Iterator<Item = &[u8]> {
        self.streams.iter().map(|(_, m)| m.bytes())
    }

    /// The main file's bytes (`data` in a directory).
    pub fn header_bytes(&self) -> &[u8] {
        self.header.bytes()
    }

    /// Parses the main file (header, attrs, features).
    pub fn data(&self) -> Result<PerfData<'_>, Error> {
        PerfData::open(self.header.bytes())
    }

    /// Every record: the main file's, then each `data.N` stream's, decoded with the main
    /// file's attrs. Within a stream, records come in file order.
    pub fn for_each_record(&self, f: &mut RecordVisitor<'_>) -> Result<(), Error> {
        self.walk(false, f).map(drop)
    }

    /// [`Recording::for_each_record`] going on past damage where the framing allows (see
    /// [`super::Records::salvaging`]); returns the damage met, in order. Errors in a
    /// `data.N` stream name its path.
    pub fn for_each_record_salvaging(
        &self,
        f: &mut RecordVisitor<'_>,
    ) -> Result<Vec<Damage>, Error> {
        self.walk(true, f)
    }

    /// The streams one after the other, each a record cursor of its own (its own zstd
    /// stream).
    fn walk(&self, salvage: bool, f: &mut RecordVisitor<'_>) -> Result<Vec<Damage>, Error> {
        let data = self.data()?;
        let mut damage = vec![];
        let streams = std::iter::once((Place::Main, None, data.data(), data.data_offset())).chain(
            self.streams
                .iter()
                .enumerate()
                .map(|(i, (path, bytes))| (Place::Stream(i), Some(path), bytes.bytes(), 0)),
        );
        for (place, path, bytes, base) in streams {
            let in_file = |e: Error| match path {
                Some(path) => e.in_file(path),
                None => e,
            };
            let mut records = data.records_in(bytes, base);
            if salvage {
                records = records.salvaging();
            }
            let mut go_on = true;
            records
                .for_each(|o, r, c| {
                    go_on = f(place, o, r, c)?;
                    Ok(go_on)
                })
                .map_err(in_file)?;
            damage.extend(records.take_damage().into_iter().map(|d| Damage {
                error: in_file(d.error),
                recovery: d.recovery,
            }));
            if !go_on {
                break;
            }
        }
        Ok(damage)
    }
}
