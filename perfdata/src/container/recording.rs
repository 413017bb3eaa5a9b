//! Opening a path: a perf.data file (file or saved pipe layout) or a `perf record
//! --threads` directory (`data` with the header, `data.N` with per-thread record streams).

use super::framing::RawRecord;
use super::mapped::MappedFile;
use super::origin::{Damage, Origin};
use super::perf_data::PerfData;
use super::records::{Record, RecordWalk, Records};
use super::session::RecordCtx;
use crate::rt::{static_endian, Endian, Endianness, Error};
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
    DataFile(usize),
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
            return Err(Error::other(
                "not a perf.data file or a --threads directory (a directory needs a `data` file)",
            )
            .in_file(&path));
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

    /// The path it was opened with: the file, or the `--threads` directory (whose
    /// header is in its `data` file).
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

    /// The main file's pages mapped ahead of a front-to-back walk over them
    /// ([`super::mapped::PopulateAhead`]).
    pub fn populate_ahead(&self) -> super::mapped::PopulateAhead {
        self.header.populate_ahead()
    }

    /// Unmaps the pages walks mapped, on another thread, for a caller done walking
    /// ([`MappedFile::release_in_background`](super::MappedFile::release_in_background));
    /// the bytes stay readable.
    pub fn release_in_background(&self) {
        self.header.release_in_background();
        for (_, s) in &self.streams {
            s.release_in_background();
        }
    }

    /// The main file's bytes (`data` in a directory).
    pub fn header_bytes(&self) -> &[u8] {
        self.header.bytes()
    }

    /// Parses the main file (header, attrs, features).
    pub fn data(&self) -> Result<PerfData<'_>, Error> {
        PerfData::open(self.header.bytes())
    }

    /// Every record of the recording, decoded with `data`'s attrs (`data` is
    /// [`Recording::data`]): the main file's, then each `data.N` stream's (each its own
    /// record cursor and zstd stream). Within a stream, records come in file order.
    pub fn records<'d, 'a>(&'d self, data: &'d PerfData<'a>) -> ChainedRecords<'d, 'a> {
        self.records_as(data, data.format.endian)
    }

    /// [`Recording::records`] in byte order `E` (see [`PerfData::records_as`]).
    pub fn records_as<'d, 'a, E: Endian>(
        &'d self,
        data: &'d PerfData<'a>,
        e: E,
    ) -> ChainedRecords<'d, 'a, E> {
        ChainedRecords {
            data,
            streams: &self.streams,
            place: Place::Main,
            records: data.records_as(e),
            salvage: false,
            damage: vec![],
            unjoined: vec![],
        }
    }

    /// Calls `f` for every record of [`Recording::records`] (`f` returns `false` to stop),
    /// in the byte order picked at compile time.
    pub fn for_each_record(&self, f: &mut RecordVisitor<'_>) -> Result<(), Error> {
        let data = self.data()?;
        static_endian!(data.format.endian, |e| self
            .records_as(&data, e)
            .for_each(&mut *f))
    }

    /// [`Recording::for_each_record`], returning the runs of simpleperf SPLIT records that
    /// made no record (see [`Records::take_unjoined`]): the walk went on without them.
    pub fn for_each_record_noting(&self, f: &mut RecordVisitor<'_>) -> Result<Vec<Error>, Error> {
        let data = self.data()?;
        static_endian!(data.format.endian, |e| {
            let mut records = self.records_as(&data, e);
            records.for_each(&mut *f)?;
            Ok(records.take_unjoined())
        })
    }

    /// [`Recording::for_each_record`] going on past damage where the framing allows (see
    /// [`ChainedRecords::salvaging`]); returns the damage met, in order.
    pub fn for_each_record_salvaging(
        &self,
        f: &mut RecordVisitor<'_>,
    ) -> Result<Vec<Damage>, Error> {
        let data = self.data()?;
        static_endian!(data.format.endian, |e| {
            let mut records = self.records_as(&data, e).salvaging();
            records.for_each(&mut *f)?;
            Ok(records.take_damage())
        })
    }
}

/// The records of a [`Recording`], stream after stream: a lending cursor like
/// [`Records`], which it chains.
pub struct ChainedRecords<'d, 'a, E: Endian = Endianness> {
    data: &'d PerfData<'a>,
    streams: &'d [(PathBuf, MappedFile)],
    place: Place,
    records: Records<'d, 'a, E>,
    salvage: bool,
    damage: Vec<Damage>,
    unjoined: Vec<Error>,
}

impl<E: Endian> ChainedRecords<'_, '_, E> {
    /// The runs of simpleperf SPLIT records that made no record so far (see
    /// [`Records::take_unjoined`]); in a `data.N` stream, the error names its path.
    pub fn take_unjoined(&mut self) -> Vec<Error> {
        self.collect_damage();
        std::mem::take(&mut self.unjoined)
    }

    /// Goes on past damage where the framing allows (see [`Records::salvaging`]);
    /// [`ChainedRecords::take_damage`] gives it. Damage in a `data.N` stream names its
    /// path.
    pub fn salvaging(mut self) -> Self {
        self.salvage = true;
        self.records = self.records.salvaging();
        self
    }

    /// The damage gone past so far, in order.
    pub fn take_damage(&mut self) -> Vec<Damage> {
        self.collect_damage();
        std::mem::take(&mut self.damage)
    }

    /// Moves to the next record: `Ok(false)` after the last stream. An error in a
    /// `data.N` stream names its path.
    #[inline]
    pub fn advance(&mut self) -> Result<bool, Error> {
        loop {
            match self.records.advance() {
                Ok(true) => return Ok(true),
                Ok(false) => {}
                Err(e) => return Err(self.in_file(e)),
            }
            self.collect_damage();
            let next = match self.place {
                Place::Main => 0,
                Place::DataFile(i) => i + 1,
            };
            let Some((_, bytes)) = self.streams.get(next) else {
                return Ok(false);
            };
            self.place = Place::DataFile(next);
            let records = self
                .data
                .records_in_as(self.records.order(), bytes.bytes(), 0);
            self.records = if self.salvage {
                records.salvaging()
            } else {
                records
            };
        }
    }

    /// The record [`ChainedRecords::advance`] moved to, and the stream it is in.
    pub fn current(&self) -> (Place, Record<'_>) {
        (self.place, self.records.current())
    }

    /// [`ChainedRecords::advance`], then [`ChainedRecords::current`].
    #[allow(clippy::should_implement_trait)] // lends: not an `Iterator`
    pub fn next(&mut self) -> Result<Option<(Place, Record<'_>)>, Error> {
        Ok(if self.advance()? {
            Some(self.current())
        } else {
            None
        })
    }

    /// Calls `f` for every record left (`f` returns `false` to stop).
    pub fn for_each<F>(&mut self, mut f: F) -> Result<(), Error>
    where
        F: FnMut(Place, Origin, RawRecord<'_>, &RecordCtx) -> Result<bool, Error>,
    {
        while self.advance()? {
            let (origin, raw, ctx) = self.records.parts();
            if !f(self.place, origin, raw, ctx)? {
                break;
            }
        }
        Ok(())
    }

    /// Names the `data.N` file in an error of its stream.
    fn in_file(&self, e: Error) -> Error {
        match self.place {
            Place::Main => e,
            Place::DataFile(i) => e.in_file(&self.streams[i].0),
        }
    }

    fn collect_damage(&mut self) {
        for e in self.records.take_unjoined() {
            let e = self.in_file(e);
            self.unjoined.push(e);
        }
        for d in self.records.take_damage() {
            let error = self.in_file(d.error);
            self.damage.push(Damage {
                error,
                recovery: d.recovery,
            });
        }
    }
}
