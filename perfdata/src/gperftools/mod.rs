//! The gperftools CPU profile: detection, reading, the map text, writing.
//!
//! Layouts (header, records, trailer) are the spec's (`spec/gperftools/`, generated into
//! [`types`]); this module does the mechanics the spec cannot say:
//! finding the producer's word size and byte order, the record loop that ends at the
//! trailer, a file cut short, the text after the binary part, and atomic writing.
//!
//! ```
//! use perfdata::gperftools::{SlotFormat, Profile};
//! use perfdata::gperftools::types::{Header, Record};
//!
//! let profile = Profile {
//!     layout: SlotFormat::B64_LE,
//!     header: Header { period_us: 1000, ..Header::default() },
//!     records: vec![Record { count: 3, pcs: vec![0x401234, 0x401100] }],
//!     map_text: b"00400000-00401000 r-xp 00000000 00:00 0 /bin/prog\n".to_vec(),
//! };
//! let bytes = profile.encode(SlotFormat::B32_BE)?;
//! let back = Profile::parse(&bytes)?;
//! assert_eq!(back.layout, SlotFormat::B32_BE);
//! assert_eq!(back.total_samples(), 3);
//! assert_eq!(back.mappings()[0].path, "/bin/prog");
//! # Ok::<(), perfdata::rt::Error>(())
//! ```

mod maps;
mod to_perf;
mod write;

pub use maps::{format_mapping, parse_map_text, resolve_mappings, MapLine, Mapping};
pub use to_perf::{to_perf, ToPerfOptions};
pub use write::{save, save_bytes};

/// Every type the gperftools spec (`spec/gperftools/`) declares, generated: the header,
/// a sample record, the trailer (`docs/gperftools-cpu-profile.md`).
pub mod types {
    pub use crate::generated::gperftools::*;
}

use crate::generated::gperftools::{Ctx, Header, Record, Trailer, HEADER_WORDS};
use crate::rt::{self, Endianness, Error, Reader, Writer};

/// The producer's word size and byte order: what a profile does not state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SlotFormat {
    /// Bytes per slot: 4 or 8.
    pub word_size: u8,
    /// Byte order of every slot.
    pub endian: Endianness,
}

impl SlotFormat {
    /// A 32-bit little-endian producer (i386, 32-bit ARM).
    pub const B32_LE: SlotFormat = SlotFormat::new(4, Endianness::Little);
    /// A 32-bit big-endian producer (32-bit PowerPC, MIPS).
    pub const B32_BE: SlotFormat = SlotFormat::new(4, Endianness::Big);
    /// A 64-bit little-endian producer (x86-64, arm64): the usual case.
    pub const B64_LE: SlotFormat = SlotFormat::new(8, Endianness::Little);
    /// A 64-bit big-endian producer (s390x, ppc64).
    pub const B64_BE: SlotFormat = SlotFormat::new(8, Endianness::Big);
    /// In the order Go's `legacy_profile.go` tries them.
    pub const ALL: [SlotFormat; 4] = [Self::B32_LE, Self::B32_BE, Self::B64_LE, Self::B64_BE];

    /// Slots of `word_size` bytes (4 or 8; anything else fails when a slot is read or
    /// written) in byte order `endian`.
    pub const fn new(word_size: u8, endian: Endianness) -> SlotFormat {
        SlotFormat { word_size, endian }
    }

    /// The spec's context for this layout.
    pub fn ctx(self) -> Ctx {
        Ctx {
            word_size: self.word_size,
        }
    }

    /// A short name: `64-bit little-endian`.
    pub fn describe(self) -> String {
        let order = match self.endian {
            Endianness::Little => "little",
            Endianness::Big => "big",
        };
        format!("{}-bit {order}-endian", u32::from(self.word_size) * 8)
    }
}

/// The first `N` slots of `bytes` read in `layout`, or `None` when the file is shorter.
fn slots<const N: usize>(bytes: &[u8], layout: SlotFormat) -> Option<[u64; N]> {
    let mut r = Reader::in_order(bytes, 0, layout.endian);
    let mut out = [0u64; N];
    for v in &mut out {
        *v = r.word(u64::from(layout.word_size)).ok()?;
    }
    Some(out)
}

/// Finds the word size and byte order from the header, as the real readers do.
///
/// First as Go's `legacy_profile.go`: the first of 32LE, 32BE, 64LE, 64BE whose header
/// reads exactly `0, 3, 0, period > 0, 0`. Then, for a producer that writes more header
/// words (the perl `pprof` accepts them), `0, n > 3, 0, period > 0, 0` where the `n + 2`
/// header slots fit in the file (a wrong byte order makes `n` huge, so it cannot pass).
pub fn detect(bytes: &[u8]) -> Option<SlotFormat> {
    detect_header(bytes, bytes.len() as u64)
}

/// [`detect`] from the first bytes of a file (at least 40 of them, when the file has
/// them) and the file's length: format detection without reading the whole file.
pub fn detect_header(head: &[u8], file_len: u64) -> Option<SlotFormat> {
    let fits = |layout: SlotFormat, n: u64| -> bool {
        n.checked_add(2)
            .and_then(|s| s.checked_mul(u64::from(layout.word_size)))
            .is_some_and(|len| len <= file_len)
    };
    let matches = |layout: SlotFormat, exact: bool| -> bool {
        match slots::<5>(head, layout) {
            Some([0, n, 0, period, 0]) if period > 0 => {
                if exact {
                    n == HEADER_WORDS
                } else {
                    n > HEADER_WORDS && fits(layout, n)
                }
            }
            _ => false,
        }
    };
    SlotFormat::ALL
        .into_iter()
        .find(|&l| matches(l, true))
        .or_else(|| SlotFormat::ALL.into_iter().find(|&l| matches(l, false)))
}

/// A whole profile in owned values: what [`Profile::encode`] writes back byte for byte.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Profile {
    /// The producer's word size and byte order (detected when read).
    pub layout: SlotFormat,
    /// The binary header: the sampling period and any extra header slots (the other
    /// slots are the format's constants).
    pub header: Header,
    /// Sample records in file order, without the trailer.
    pub records: Vec<Record>,
    /// Everything after the trailer (the memory map text), unparsed: see
    /// [`Profile::map_lines`] and [`Profile::mappings`].
    #[serde(serialize_with = "serialize_text")]
    pub map_text: Vec<u8>,
}

fn serialize_text<S: serde::Serializer>(text: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(text))
}

impl Profile {
    /// Reads a complete profile; any problem (including a file cut short) is an error.
    pub fn parse(bytes: &[u8]) -> rt::Result<Profile> {
        match Self::parse_partial(bytes)? {
            (p, None) => Ok(p),
            (_, Some(e)) => Err(e),
        }
    }

    /// Reads a profile that may be cut short (the profile of a killed process): the
    /// records before the problem, and the error that stopped the reading (byte offset,
    /// record index, field). Only an unreadable header is an `Err`.
    pub fn parse_partial(bytes: &[u8]) -> rt::Result<(Profile, Option<Error>)> {
        let Some(layout) = detect(bytes) else {
            return Err(not_a_profile(bytes));
        };
        // Profiles are small next to perf.data files: the run-time byte order is enough.
        parse_as(bytes, layout)
    }

    /// The sampling period in microseconds.
    pub fn period_us(&self) -> u64 {
        self.header.period_us
    }

    /// The sum of all record counts.
    pub fn total_samples(&self) -> u64 {
        self.records
            .iter()
            .fold(0u64, |n, r| n.saturating_add(r.count))
    }

    /// The map text, line by line (unknown lines kept as [`MapLine::Other`]).
    pub fn map_lines(&self) -> Vec<MapLine> {
        parse_map_text(&self.map_text)
    }

    /// The memory mappings of the map text, with `$build` (and any `$NAME` defined by a
    /// `NAME=value` line) substituted in paths.
    pub fn mappings(&self) -> Vec<Mapping> {
        resolve_mappings(&self.map_lines())
    }

    /// The profile's bytes in `layout` (header, records, trailer, map text). In the
    /// layout it was read in, an unmodified profile gives back the bytes it was read from.
    pub fn encode(&self, layout: SlotFormat) -> rt::Result<Vec<u8>> {
        let ctx = layout.ctx();
        let ws = usize::from(layout.word_size);
        let slots = self
            .records
            .iter()
            .fold(8usize, |n, r| n.saturating_add(r.pcs.len() + 2));
        let mut w = Writer::from_vec_in(
            Vec::with_capacity(slots.saturating_mul(ws) + self.map_text.len()),
            layout.endian,
        );
        self.header
            .encode(&mut w, &ctx)
            .map_err(|e| e.in_field("header"))?;
        for (i, rec) in self.records.iter().enumerate() {
            rec.encode(&mut w, &ctx)
                .map_err(|e| e.with_record(i as u64, "sample"))?;
        }
        Trailer::default()
            .encode(&mut w, &ctx)
            .map_err(|e| e.in_field("trailer"))?;
        w.put_bytes(&self.map_text);
        Ok(w.into_vec())
    }
}

#[cold]
fn not_a_profile(bytes: &[u8]) -> Error {
    let shown: Vec<String> = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
    Error::invalid(
        Some(0),
        "a gperftools CPU profile header (slots 0, 3, 0, period > 0, 0 as 4- or 8-byte words in either byte order)",
        if bytes.is_empty() {
            "an empty file".to_string()
        } else {
            format!("bytes {}", shown.join(" "))
        },
    )
}

fn parse_as(bytes: &[u8], layout: SlotFormat) -> rt::Result<(Profile, Option<Error>)> {
    let ctx = layout.ctx();
    let mut r = Reader::in_order(bytes, 0, layout.endian);
    let header = Header::decode(&mut r, &ctx).map_err(|e| e.in_field("header"))?;
    let mut profile = Profile {
        layout,
        header,
        records: Vec::new(),
        map_text: Vec::new(),
    };
    loop {
        let index = profile.records.len() as u64;
        if r.is_empty() {
            let e = Error::invalid(
                Some(r.offset()),
                "a sample record or the trailer (0, 1, 0)",
                "the end of the file",
            )
            .with_record(index, "sample");
            return Ok((profile, Some(e)));
        }
        let start = r.offset();
        let rec = match Record::decode(&mut r, &ctx) {
            Ok(rec) => rec,
            Err(e) => {
                // A record cut short: its count / npcs / a PC runs past the end.
                let e = e.or_offset(start).with_record(index, "sample");
                return Ok((profile, Some(e)));
            }
        };
        if rec.count == 0 && rec.pcs.len() == 1 && rec.pcs[0] == 0 {
            break;
        }
        profile.records.push(rec);
    }
    profile.map_text = r.rest().to_vec();
    Ok((profile, None))
}

#[cfg(test)]
mod tests;
