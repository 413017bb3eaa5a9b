//! Reading back what we wrote: framing and decode of every record (compressed ones
//! expanded) and every feature, streaming over a memory map. A writer calls it before it
//! replaces its target, so a conversion never leaves a file that cannot be read.

use crate::container::{
    decode_body, detect, Layout, MappedFile, Origin, PerfData, PipeReader, ReleaseBehind,
};
use crate::generated::perf_data::FeatureId;
use crate::rt::Error;
use std::io::Read;
use std::path::Path;

/// Checks that the file at `path` reads back entirely.
pub fn read_back_file(path: &Path) -> Result<(), Error> {
    read_back_file_allowing(path, &[])
}

/// What a rewrite carries of its input's damage as it is, so that reading the output back
/// may meet it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carried {
    /// Features that may fail to decode (damaged in the input).
    pub damaged: Vec<FeatureId>,
    /// Bytes after the last record that frame no record, from this offset in the data
    /// (relative to its start) to the end: a copy keeps them byte for byte.
    pub unframed_tail: Option<u64>,
}

impl From<Vec<FeatureId>> for Carried {
    fn from(damaged: Vec<FeatureId>) -> Self {
        Carried {
            damaged,
            unframed_tail: None,
        }
    }
}

/// [`read_back_file`], except that the features in `damaged` may fail to decode: a
/// rewrite carries a damaged feature of its input as it is.
pub fn read_back_file_allowing(path: &Path, damaged: &[FeatureId]) -> Result<(), Error> {
    read_back_file_carrying(path, &Carried::from(damaged.to_vec()))
}

/// [`read_back_file`], allowing what the output carries of its input's damage: damaged
/// features, and a tail of bytes that frames no record (the walk stops there).
pub fn read_back_file_carrying(path: &Path, carried: &Carried) -> Result<(), Error> {
    let file = MappedFile::open(path)?;
    if detect(file.bytes())?.layout == Layout::Pipe {
        // A pipe is opened with a first pass over all of it (PerfData::open): read it as a
        // stream instead, which holds one record at a time. Its data starts after the
        // 16-byte header.
        drop(file);
        let tail = carried.unframed_tail.map(|t| t + PIPE_HEADER);
        return read_back_stream(std::io::BufReader::new(std::fs::File::open(path)?))
            .or_else(|e| in_tail(e, tail));
    }
    read_back_with(file.bytes(), carried, &mut ReleaseBehind::new(&file))
}

/// A pipe's header: magic and size.
const PIPE_HEADER: u64 = 16;

/// `Ok` when the walk failed in the unframed tail (at or past `tail`, an absolute
/// offset), else the error.
fn in_tail(e: Error, tail: Option<u64>) -> Result<(), Error> {
    match (e.offset(), tail) {
        (Some(at), Some(t)) if at >= t => Ok(()),
        _ => Err(e),
    }
}

/// Checks that a pipe-layout stream reads back entirely.
pub fn read_back_stream(input: impl Read) -> Result<(), Error> {
    let mut reader = PipeReader::new(input)?;
    let endian = reader.endian();
    let mut index = 0u64;
    while let Some(rec) = reader.next_record()? {
        let ty = rec.raw.record_type();
        // As in `read_back_with`: samples through their view's validate().
        match rec.sample() {
            Ok(Some(s)) => s.validate(),
            Ok(None) => decode_body(endian, ty, rec.raw.body, 0, &rec.ctx).map(drop),
            Err(e) => Err(e),
        }
        .map_err(|e| e.with_record(index, ty.label()))?;
        index += 1;
    }
    Ok(())
}

/// Checks that `bytes` read back entirely: header, attrs, every feature, every record.
pub fn read_back(bytes: &[u8]) -> Result<(), Error> {
    read_back_with(bytes, &Carried::default(), &mut ReleaseBehind::none())
}

/// [`read_back`], telling `release` how far the walk has come.
fn read_back_with(
    bytes: &[u8],
    carried: &Carried,
    release: &mut ReleaseBehind<'_>,
) -> Result<(), Error> {
    let damaged = &carried.damaged;
    let data = PerfData::open(bytes)?;
    let tail = carried.unframed_tail.map(|t| t + data.data_offset());
    // A writer never cuts its feature table; it carries damaged sections as they are.
    if data.feature_table_cut.is_some() {
        return Err(data.feature_problems().pop().expect("the cut table"));
    }
    for f in &data.features {
        match data.feature(f) {
            Err(e) if !damaged.contains(&f.id) => return Err(e),
            _ => {}
        }
    }
    let mut index = 0u64;
    data.for_each_record(&mut |origin, rec, ctx| {
        if origin == Origin::Input {
            release.reached(rec.offset);
        }
        // Samples (nearly every record) through their view: the decoder's checks without
        // building the value.
        match data.sample(&rec, ctx) {
            Ok(Some(s)) => s.validate(),
            Ok(None) => data.decode(&rec, ctx).map(drop),
            Err(e) => Err(e),
        }
        .map_err(|e| e.with_record(index, rec.record_type().label()))?;
        index += 1;
        Ok(true)
    })
    .or_else(|e| in_tail(e, tail))
}
