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

/// [`read_back_file`], except that the features in `damaged` may fail to decode: a
/// rewrite carries a damaged feature of its input as it is.
pub fn read_back_file_allowing(path: &Path, damaged: &[FeatureId]) -> Result<(), Error> {
    let file = MappedFile::open(path)?;
    if detect(file.bytes())?.layout == Layout::Pipe {
        // A pipe is opened with a first pass over all of it (PerfData::open): read it as a
        // stream instead, which holds one record at a time.
        drop(file);
        return read_back_stream(std::io::BufReader::new(std::fs::File::open(path)?));
    }
    read_back_with(file.bytes(), damaged, &mut ReleaseBehind::new(&file))
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
    read_back_with(bytes, &[], &mut ReleaseBehind::none())
}

/// [`read_back`], telling `release` how far the walk has come.
fn read_back_with(
    bytes: &[u8],
    damaged: &[FeatureId],
    release: &mut ReleaseBehind<'_>,
) -> Result<(), Error> {
    let data = PerfData::open(bytes)?;
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
}
