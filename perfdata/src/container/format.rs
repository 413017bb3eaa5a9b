//! Which kind of perf.data input a byte string is: decided from the magic and header size.

use crate::generated::perf_data::{
    PERF_FILE_HEADER_SIZE, PERF_FILE_HEADER_SIZE_NO_FEATURES, PERF_MAGIC, PERF_MAGIC_V1,
    PERF_PIPE_HEADER_SIZE,
};
use crate::rt::{Endian, Endianness, Error};

/// How the records are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Layout {
    /// File mode: header, attrs section, data section, feature sections.
    File,
    /// Pipe mode: a 16-byte header then records to the end of the stream.
    Pipe,
}

/// What [`detect`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Format {
    /// The byte order of everything after the magic: from the magic (`PERFILE2`, or
    /// `2ELIFREP` byte-swapped), or for a legacy `PERFFILE` guessed from the header as
    /// perf does.
    pub endian: Endianness,
    /// File mode (sections found through the header) or pipe mode (a stream of records).
    pub layout: Layout,
    /// The legacy `PERFFILE` (version 1) magic.
    pub legacy_v1: bool,
    /// File mode with the old 72-byte header: no feature bitmap, so no features.
    pub short_header: bool,
}

fn u64_at(bytes: &[u8], at: usize, endian: Endianness) -> Option<u64> {
    let b: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(endian.read_u64(b))
}

/// Detects the format from the first bytes (at least 16; 24 for legacy files).
pub fn detect(bytes: &[u8]) -> Result<Format, Error> {
    let not_perf = |why: String| {
        Error::invalid(
            Some(0),
            "a perf.data magic (\"PERFILE2\", \"2ELIFREP\" or \"PERFFILE\")",
            why,
        )
    };
    let magic: [u8; 8] = match bytes.get(..8) {
        Some(m) => m.try_into().expect("8 bytes"),
        None => {
            return Err(not_perf(format!(
                "only {} bytes: not a perf.data file",
                bytes.len()
            )))
        }
    };
    let (endian, legacy_v1) = if magic == PERF_MAGIC.to_le_bytes() {
        (Endianness::Little, false)
    } else if magic == PERF_MAGIC.to_be_bytes() {
        (Endianness::Big, false)
    } else if magic == PERF_MAGIC_V1.to_le_bytes() {
        (
            legacy_endian(bytes).ok_or_else(|| {
                not_perf(
                    "legacy PERFFILE magic, but neither byte order gives a known header".into(),
                )
            })?,
            true,
        )
    } else {
        return Err(not_perf(format!(
            "bytes {:02x?}: not a perf.data file",
            magic
        )));
    };
    let size = u64_at(bytes, 8, endian)
        .ok_or_else(|| Error::unexpected_end(8, 8, bytes.len().saturating_sub(8) as u64))?;
    let (layout, short_header) = match size {
        s if s == PERF_PIPE_HEADER_SIZE => (Layout::Pipe, false),
        s if s == PERF_FILE_HEADER_SIZE => (Layout::File, false),
        s if s == PERF_FILE_HEADER_SIZE_NO_FEATURES => (Layout::File, true),
        s => {
            return Err(Error::invalid(
                Some(8),
                "header size 16 (pipe), 104 or 72 (file)",
                s.to_string(),
            ))
        }
    };
    Ok(Format {
        endian,
        layout,
        legacy_v1,
        short_header,
    })
}

/// The legacy magic does not encode the byte order: perf guesses it from the header size
/// (pipe) or from attr_size, which must be a known attr size + 16.
/// The `perf_event_attr` sizes a legacy `PERFFILE` file's attr_size (each + 16) is
/// recognised by: what tells its byte order.
pub(crate) const LEGACY_ATTR_SIZES: [u64; 5] = [64, 72, 80, 96, 104];

fn legacy_endian(bytes: &[u8]) -> Option<Endianness> {
    for endian in [Endianness::Little, Endianness::Big] {
        let size = u64_at(bytes, 8, endian)?;
        if size == PERF_PIPE_HEADER_SIZE {
            return Some(endian);
        }
        let attr_size = u64_at(bytes, 16, endian)?;
        if LEGACY_ATTR_SIZES.iter().any(|s| s + 16 == attr_size) {
            return Some(endian);
        }
    }
    None
}
