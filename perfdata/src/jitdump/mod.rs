//! perf's jitdump files (`jit-PID.dump`): detection, reading, writing.
//!
//! Layouts (header, records and their bodies) are the spec's (`spec/jitdump/`, generated
//! into [`types`]; `docs/jitdump-format.md`); this module does what the spec cannot say:
//! the byte order from the magic, the record loop to the end of the file, and a file cut
//! short (the producer still running, or killed), whose records before the cut are kept.
//!
//! ```
//! use perfdata::jitdump::types::{CodeLoad, Header, Record, RecordBody, RecordId};
//! use perfdata::jitdump::JitDump;
//! use perfdata::rt::{Bytes, Endianness, Str};
//!
//! let load = CodeLoad {
//!     pid: 42,
//!     tid: 42,
//!     vma: 0x1000,
//!     code_addr: 0x1000,
//!     code_size: 4,
//!     code_index: 7,
//!     name: Str::cstr("JS:*fib"),
//!     code: Bytes::from(&b"\x90\x90\x90\xc3"[..]),
//! };
//! let dump = JitDump {
//!     endian: Endianness::Big,
//!     header: JitDump::header(42, 62),
//!     records: vec![Record {
//!         id: RecordId::CODE_LOAD,
//!         timestamp: 5,
//!         body: RecordBody::CodeLoad(load),
//!         tail: None,
//!     }],
//! };
//! let bytes = dump.encode()?;
//! let back = JitDump::parse(&bytes)?;
//! assert_eq!(back, dump);
//! assert_eq!(back.code_loads().next().unwrap().1.name.to_str_lossy(), "JS:*fib");
//! # Ok::<(), perfdata::rt::Error>(())
//! ```

mod dump;
pub use dump::dump_jitdump;

/// Every type the jitdump spec (`spec/jitdump/`) declares, generated.
pub mod types {
    pub use crate::generated::jitdump::*;
}

use crate::generated::jitdump::{
    CodeLoad, Ctx, Header, JitFlags, Record, RecordBody, RecordId, JITHEADER_MAGIC,
    JITHEADER_VERSION,
};
use crate::rt::{self, Endianness, Error, Reader, Writer};

/// The byte order of a jitdump, from its magic; `None` when the bytes do not start with
/// one.
pub fn detect(bytes: &[u8]) -> Option<Endianness> {
    let magic: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    if u32::from_le_bytes(magic) == JITHEADER_MAGIC {
        Some(Endianness::Little)
    } else if u32::from_be_bytes(magic) == JITHEADER_MAGIC {
        Some(Endianness::Big)
    } else {
        None
    }
}

/// A jitdump file: what [`JitDump::encode`] writes back byte for byte.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JitDump<'a> {
    /// The producer's byte order (from the magic).
    pub endian: Endianness,
    /// The file header.
    pub header: Header<'a>,
    /// Every record, in file order.
    pub records: Vec<Record<'a>>,
}

impl<'a> JitDump<'a> {
    /// A version-1 header for process `pid` and ELF machine `elf_mach`, no flags.
    pub fn header(pid: u32, elf_mach: u32) -> Header<'static> {
        Header {
            magic: JITHEADER_MAGIC,
            version: JITHEADER_VERSION,
            elf_mach,
            pad1: 0,
            pid,
            timestamp: 0,
            flags: JitFlags(0),
            tail: None,
        }
    }

    /// Reads a complete file; any problem (a record cut short included) is an error.
    pub fn parse(bytes: &'a [u8]) -> rt::Result<JitDump<'a>> {
        match Self::parse_partial(bytes)? {
            (d, None) => Ok(d),
            (_, Some(e)) => Err(e),
        }
    }

    /// Reads a file that may be cut short or damaged: the records before the problem,
    /// and the error that stopped the reading (byte offset, record index and kind,
    /// field). Only an unreadable header is an `Err`.
    pub fn parse_partial(bytes: &'a [u8]) -> rt::Result<(JitDump<'a>, Option<Error>)> {
        let Some(endian) = detect(bytes) else {
            return Err(not_a_jitdump(bytes));
        };
        let ctx = Ctx {};
        let mut r = Reader::in_order(bytes, 0, endian);
        let header = Header::decode(&mut r, &ctx).map_err(|e| e.in_field("header"))?;
        if header.version != JITHEADER_VERSION {
            return Err(Error::invalid(
                Some(4),
                "jitdump version 1",
                format!("version {}", header.version),
            )
            .in_field("header.version"));
        }
        let mut dump = JitDump {
            endian,
            header,
            records: vec![],
        };
        while !r.is_empty() {
            let start = r.offset();
            let index = dump.records.len() as u64;
            match Record::decode(&mut r, &ctx) {
                Ok(rec) => dump.records.push(rec),
                Err(e) => {
                    // The record's id, when its first 4 bytes are there.
                    let mut at = Reader::in_order(bytes, 0, endian);
                    let kind = at
                        .skip(start)
                        .and_then(|()| at.u32())
                        .map_or_else(|_| "record".to_string(), |id| RecordId(id).to_string());
                    return Ok((dump, Some(e.or_offset(start).with_record(index, kind))));
                }
            }
        }
        Ok((dump, None))
    }

    /// The code loads, with their timestamps, in file order.
    pub fn code_loads(&self) -> impl Iterator<Item = (u64, &CodeLoad<'a>)> {
        self.records.iter().filter_map(|r| match &r.body {
            RecordBody::CodeLoad(c) => Some((r.timestamp, c)),
            _ => None,
        })
    }

    /// The file's bytes in [`JitDump::endian`]: an unmodified file read by
    /// [`JitDump::parse`] gives back the bytes it was read from.
    pub fn encode(&self) -> rt::Result<Vec<u8>> {
        let ctx = Ctx {};
        let mut w = Writer::in_order(self.endian);
        self.header
            .encode(&mut w, &ctx)
            .map_err(|e| e.in_field("header"))?;
        for (i, rec) in self.records.iter().enumerate() {
            rec.encode(&mut w, &ctx)
                .map_err(|e| e.with_record(i as u64, "record"))?;
        }
        Ok(w.into_vec())
    }
}

#[cold]
fn not_a_jitdump(bytes: &[u8]) -> Error {
    let shown: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Error::invalid(
        Some(0),
        "a jitdump header (magic `JiTD` in either byte order)",
        if bytes.is_empty() {
            "an empty file".to_string()
        } else {
            format!("bytes {}", shown.join(" "))
        },
    )
}

#[cfg(test)]
mod tests;
