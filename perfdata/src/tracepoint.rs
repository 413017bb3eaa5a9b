//! Tracepoint samples by field: the event format files a recording carries in its tracing
//! data (the TRACING_DATA feature, or a pipe's HEADER_TRACING_DATA record) name each field
//! of a tracepoint's RAW data, with its offset, size and sign (`field:pid_t prev_pid;
//! offset:24; size:4; signed:1;`). The format files are text written by the kernel, not a
//! perf.data layout: this module parses them and reads a RAW sample's fields through them.
//!
//! ```
//! use perfdata::tracepoint::{FieldValue, Formats};
//! use perfdata::Recording;
//! use perfdata::types::RecordBody;
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tracepoint.data");
//! let recording = Recording::open(path)?;
//! let data = recording.data()?;
//! let formats = Formats::of_file(&data).expect("a recording with tracing data");
//! let mut seen = 0;
//! recording.for_each_record(&mut |_, _, rec, ctx| {
//!     if let RecordBody::Sample(s) = data.decode(&rec, ctx)? {
//!         let raw = s.raw.as_ref().expect("tracepoint samples carry RAW data");
//!         let (format, fields) = formats.decode(&raw.data).expect("a known event");
//!         assert_eq!(fields[0].0.name, "common_type");
//!         if format.name == "sched_switch" {
//!             assert!(matches!(fields.iter().find(|f| f.0.name == "prev_comm").unwrap().1,
//!                 Some(FieldValue::Text(_))));
//!         }
//!         seen += 1;
//!     }
//!     Ok(true)
//! })?;
//! assert!(seen > 0);
//! # Ok::<(), perfdata::rt::Error>(())
//! ```

use crate::container::{PerfData, RawRecord};
use crate::generated::perf_data::{Ctx, FeatureBody, FeatureId, RecordType, TracingData};
use crate::rt::{get_u16, get_u32, get_u64, Endianness, Reader};
use std::collections::HashMap;

/// One field of an event format file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name: the declaration's last identifier (`prev_comm`).
    pub name: String,
    /// The C declaration as written (`char prev_comm[16]`, `__data_loc char[] name`).
    pub decl: String,
    /// Byte offset in the RAW data (`offset:`; `common_type` is at 0).
    pub offset: usize,
    /// Bytes the field occupies in place (`size:`): the whole array for an array, the
    /// 4-byte locator for a `__data_loc` field.
    pub size: usize,
    /// `signed:1`: integers are sign-extended ([`FieldValue::Signed`]).
    pub signed: bool,
    /// `char x[N]`: a NUL-terminated string in place.
    pub char_array: bool,
    /// `__data_loc char[] x`: u32 (offset | len << 16) pointing to a string.
    pub data_loc_string: bool,
    /// `type x[N]` (not char): N elements of `size / N` bytes.
    pub array_len: Option<usize>,
}

/// An event format: its name, `ID:` and fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// The event's name (`name:`), without its system (`sched_switch`).
    pub name: String,
    /// The tracepoint id (`ID:`): `attr.config` of the event and the RAW data's
    /// `common_type`.
    pub id: u16,
    /// The fields in the file's order, common fields (`common_type`, `common_pid`…)
    /// first.
    pub fields: Vec<Field>,
}

/// The value of one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue<'a> {
    /// A signed integer of 1, 2, 4 or 8 bytes, sign-extended.
    Signed(i64),
    /// An unsigned integer of 1, 2, 4 or 8 bytes (pointers and ids too).
    Unsigned(u64),
    /// A char array or `__data_loc char[]` string, up to its NUL (invalid UTF-8 replaced).
    Text(String),
    /// A fixed array of 1-, 2-, 4- or 8-byte elements.
    SignedArray(Vec<i64>),
    /// A fixed array of unsigned 1-, 2-, 4- or 8-byte elements.
    UnsignedArray(Vec<u64>),
    /// Anything else (a `__data_loc` array that is not a string, an odd size): the bytes.
    Bytes(&'a [u8]),
}

impl serde::Serialize for FieldValue<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            FieldValue::Signed(v) => s.serialize_i64(*v),
            FieldValue::Unsigned(v) => s.serialize_u64(*v),
            FieldValue::Text(t) => s.serialize_str(t),
            FieldValue::SignedArray(v) => v.serialize(s),
            FieldValue::UnsignedArray(v) => v.serialize(s),
            FieldValue::Bytes(b) => {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("bytes", &crate::rt::Bytes::from(*b))?;
                m.end()
            }
        }
    }
}

/// Parses one `events/<sys>/<event>/format` file (`None` without an `ID:` line).
pub fn parse_format(text: &str) -> Option<Format> {
    let mut name = String::new();
    let mut id = None;
    let mut fields = vec![];
    for line in text.lines() {
        let t = line.trim();
        if let Some(n) = t.strip_prefix("name: ") {
            name = n.to_string();
        } else if let Some(n) = t.strip_prefix("ID: ") {
            id = n.trim().parse().ok();
        } else if let Some(rest) = t.strip_prefix("field:") {
            if let Some(f) = parse_field(rest) {
                fields.push(f);
            }
        }
    }
    Some(Format {
        name,
        id: id?,
        fields,
    })
}

fn parse_field(rest: &str) -> Option<Field> {
    let mut decl = "";
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    for part in rest.split(';').map(str::trim) {
        if let Some(v) = part.strip_prefix("offset:") {
            offset = v.parse().ok();
        } else if let Some(v) = part.strip_prefix("size:") {
            size = v.parse().ok();
        } else if let Some(v) = part.strip_prefix("signed:") {
            signed = v == "1";
        } else if decl.is_empty() {
            decl = part;
        }
    }
    let (offset, size) = (offset?, size?);
    let ident = decl.split('[').next().unwrap_or(decl);
    let name = ident.split_whitespace().last().unwrap_or("").to_string();
    let is_char = ident.split_whitespace().any(|w| w == "char");
    let data_loc = decl.starts_with("__data_loc");
    let bracket = (!data_loc)
        .then(|| decl.split_once('['))
        .flatten()
        .map(|(_, n)| n.split(']').next().unwrap_or("").trim());
    let char_array = is_char && bracket.is_some();
    let array_len = bracket
        .filter(|_| !is_char)
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0);
    Some(Field {
        name,
        decl: decl.to_string(),
        offset,
        size,
        signed,
        char_array,
        data_loc_string: data_loc && is_char,
        array_len,
    })
}

/// The event formats of a recording's tracing data, by tracepoint id (`ID:`, which is
/// `attr.config` of a tracepoint event and the RAW data's `common_type`).
#[derive(Debug, Clone, Default)]
pub struct Formats {
    by_id: HashMap<u16, Format>,
    /// The RAW data's byte order (`TracingData.big_endian`).
    pub endian: Endianness,
}

impl Formats {
    /// The formats of a decoded tracing data.
    pub fn new(t: &TracingData<'_>) -> Self {
        let mut by_id = HashMap::new();
        let files = t
            .body
            .ftrace_formats
            .iter()
            .chain(t.body.systems.iter().flat_map(|s| s.formats.iter()));
        for f in files {
            if let Some(fmt) = parse_format(&String::from_utf8_lossy(f.data.as_slice())) {
                by_id.insert(fmt.id, fmt);
            }
        }
        Formats {
            by_id,
            endian: if t.big_endian != 0 {
                Endianness::Big
            } else {
                Endianness::Little
            },
        }
    }

    /// The formats of a pipe's HEADER_TRACING_DATA record (the tracing data is its
    /// payload), in the stream's byte order; `None` for another record type or a payload
    /// that does not decode.
    pub fn of_record(r: &RawRecord<'_>, endian: Endianness) -> Option<Self> {
        if r.record_type() != RecordType::HEADER_TRACING_DATA {
            return None;
        }
        let t = TracingData::decode(&mut Reader::in_order(r.payload, 0, endian), &Ctx::default());
        t.ok().map(|t| Self::new(&t))
    }

    /// The formats of a file's TRACING_DATA feature (a pipe carries them in a
    /// HEADER_TRACING_DATA record instead: [`Formats::of_record`]).
    pub fn of_file(data: &PerfData<'_>) -> Option<Self> {
        let fs = data
            .features
            .iter()
            .find(|f| f.id == FeatureId::TRACING_DATA)?;
        match data.feature(fs).ok()? {
            FeatureBody::TracingData(t) => Some(Self::new(&t)),
            _ => None,
        }
    }

    /// The format of tracepoint `id`.
    pub fn get(&self, id: u16) -> Option<&Format> {
        self.by_id.get(&id)
    }

    /// Every format, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Format> {
        self.by_id.values()
    }

    /// True when the tracing data held no format that parses (no tracepoint event can
    /// be read by field).
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The format of a RAW sample, by its `common_type` (its first two bytes).
    pub fn format_of(&self, raw: &[u8]) -> Option<&Format> {
        let id = read_uint(raw, 0, 2, self.endian)?;
        self.get(id as u16)
    }

    /// A RAW sample's fields, in the format's order: `None` for a field outside `raw`.
    /// `None` when no format has the sample's `common_type`.
    #[allow(clippy::type_complexity)]
    pub fn decode<'r>(
        &self,
        raw: &'r [u8],
    ) -> Option<(&Format, Vec<(&Field, Option<FieldValue<'r>>)>)> {
        let fmt = self.format_of(raw)?;
        let fields = fmt
            .fields
            .iter()
            .map(|f| (f, field_value(raw, f, self.endian)))
            .collect();
        Some((fmt, fields))
    }
}

/// The unsigned integer of `size` (1, 2, 4 or 8) bytes at `at`, `None` outside `raw`.
fn read_uint(raw: &[u8], at: usize, size: usize, e: Endianness) -> Option<u64> {
    let b = raw.get(at..at.checked_add(size)?)?;
    Some(match size {
        1 => u64::from(b[0]),
        2 => u64::from(get_u16(b, 0, e)),
        4 => u64::from(get_u32(b, 0, e)),
        _ => get_u64(b, 0, e),
    })
}

fn c_string(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn sign_extend(v: u64, size: usize) -> i64 {
    let shift = 64 - 8 * size as u32;
    ((v << shift) as i64) >> shift
}

/// The value of `field` in `raw` (RAW data in byte order `e`); `None` when the
/// field lies outside `raw`.
pub fn field_value<'r>(raw: &'r [u8], field: &Field, e: Endianness) -> Option<FieldValue<'r>> {
    let end = field.offset.checked_add(field.size)?;
    let bytes = raw.get(field.offset..end)?;
    if field.char_array {
        return Some(FieldValue::Text(c_string(bytes)));
    }
    if field.decl.starts_with("__data_loc") {
        let loc = read_uint(raw, field.offset, 4, e)?;
        let (off, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
        let data = raw.get(off..off + len)?;
        return Some(if field.data_loc_string {
            FieldValue::Text(c_string(data))
        } else {
            FieldValue::Bytes(data)
        });
    }
    if let Some(n) = field.array_len {
        let each = field.size / n;
        if each * n == field.size && matches!(each, 1 | 2 | 4 | 8) {
            let values = (0..n).map(|i| read_uint(bytes, i * each, each, e).unwrap_or(0));
            return Some(if field.signed {
                FieldValue::SignedArray(values.map(|v| sign_extend(v, each)).collect())
            } else {
                FieldValue::UnsignedArray(values.collect())
            });
        }
        return Some(FieldValue::Bytes(bytes));
    }
    if !matches!(field.size, 1 | 2 | 4 | 8) {
        return Some(FieldValue::Bytes(bytes));
    }
    let v = read_uint(bytes, 0, field.size, e)?;
    Some(if field.signed {
        FieldValue::Signed(sign_extend(v, field.size))
    } else {
        FieldValue::Unsigned(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMAT: &str = "name: sched_switch\nID: 316\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
\tfield:unsigned long args[2];\toffset:40;\tsize:16;\tsigned:0;\n\
\tfield:__data_loc char[] name;\toffset:56;\tsize:4;\tsigned:0;\n\
\tfield:__data_loc u8[] buf;\toffset:60;\tsize:4;\tsigned:0;\n\nprint fmt: \"...\"\n";

    #[test]
    fn format_and_values() {
        let f = parse_format(FORMAT).unwrap();
        assert_eq!(f.id, 316);
        assert_eq!(f.fields.len(), 8);
        assert!(f.fields[2].char_array);
        assert_eq!(f.fields[5].array_len, Some(2));
        assert!(f.fields[6].data_loc_string);
        assert!(!f.fields[7].data_loc_string);
        let mut raw = vec![0u8; 72];
        raw[0] = 0x3c;
        raw[1] = 0x01;
        raw[8..12].copy_from_slice(b"perf");
        raw[24..28].copy_from_slice(&(-5i32).to_le_bytes());
        raw[40..48].copy_from_slice(&7u64.to_le_bytes());
        raw[56..60].copy_from_slice(&(64u32 | 3 << 16).to_le_bytes());
        raw[60..64].copy_from_slice(&(67u32 | 2 << 16).to_le_bytes());
        raw[64..69].copy_from_slice(b"ab\0\x01\x02");
        let formats = Formats {
            by_id: [(316, f)].into_iter().collect(),
            endian: Endianness::Little,
        };
        let (fmt, values) = formats.decode(&raw).unwrap();
        assert_eq!(fmt.name, "sched_switch");
        let v: Vec<_> = values.into_iter().map(|(_, v)| v.unwrap()).collect();
        assert_eq!(v[0], FieldValue::Unsigned(316));
        assert_eq!(v[2], FieldValue::Text("perf".into()));
        assert_eq!(v[3], FieldValue::Signed(-5));
        assert_eq!(v[5], FieldValue::UnsignedArray(vec![7, 0]));
        assert_eq!(v[6], FieldValue::Text("ab".into()));
        assert_eq!(v[7], FieldValue::Bytes(&[1, 2]));
        // A field past the end of a short RAW is `None`, not a panic.
        let (_, values) = formats.decode(&raw[..30]).unwrap();
        assert!(values[3].1.is_some() && values[4].1.is_none());
        assert!(formats.decode(&[0x3d, 0x01]).is_none());
    }
}
