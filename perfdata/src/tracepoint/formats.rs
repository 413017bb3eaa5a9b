//! The event formats of a recording's tracing data (the TRACING_DATA feature, or a
//! pipe's HEADER_TRACING_DATA record), with what printing needs besides them: the
//! payloads' byte order, the producer's `sizeof(long)` and the kernel's printk formats.

use super::format::{field_value, read_uint, Field, FieldValue, Format};
use super::print::eval::Env;
use super::print::{KernelSymbols, PrintFmtError, TraceError};
use crate::container::{PerfData, RawRecord};
use crate::generated::perf_data::{Ctx, FeatureBody, FeatureId, RecordType, TracingData};
use crate::rt::{Endianness, Reader};
use std::collections::HashMap;

/// The event formats of a recording's tracing data, by tracepoint id (`ID:`, which is
/// `attr.config` of a tracepoint event and the RAW data's `common_type`).
#[derive(Debug, Clone)]
pub struct Formats {
    by_id: HashMap<u16, Format>,
    /// The RAW data's byte order (`TracingData.big_endian`).
    pub endian: Endianness,
    /// The producer's `sizeof(long)` as libtraceevent takes it: the size of
    /// `header_page`'s `commit` field, else the tracing data's `long_size`.
    pub long_size: usize,
    /// `printk_formats`: kernel string addresses and their text (`%s` of a pointer
    /// field, bprint formats).
    printk: HashMap<u64, String>,
    /// Where `common_type` lies (offset, size), as the lowest-id format says.
    type_field: (usize, usize),
}

impl Default for Formats {
    fn default() -> Self {
        Formats::from_formats(vec![], Endianness::Little, 8)
    }
}

impl Formats {
    /// The formats of a decoded tracing data.
    pub fn new(t: &TracingData<'_>) -> Self {
        let body = &t.body;
        let long_size =
            header_page_long(&String::from_utf8_lossy(body.header_page.data.as_slice()))
                .unwrap_or(usize::from(body.long_size));
        let text = |f: &crate::generated::perf_data::TracingFile<'_>| {
            String::from_utf8_lossy(f.data.as_slice()).into_owned()
        };
        let ftrace = body
            .ftrace_formats
            .iter()
            .filter_map(|f| Format::parse("ftrace", &text(f), long_size));
        let systems = body.systems.iter().flat_map(|s| {
            let system = s.name.to_str_lossy().into_owned();
            s.formats
                .iter()
                .filter_map(move |f| Format::parse(&system, &text(f), long_size))
        });
        let endian = if t.big_endian != 0 {
            Endianness::Big
        } else {
            Endianness::Little
        };
        let mut formats = Formats::from_formats(ftrace.chain(systems), endian, long_size);
        formats.printk = parse_printk(&String::from_utf8_lossy(body.printk_formats.as_slice()));
        formats
    }

    /// Formats made elsewhere (parsed with [`Format::parse`]), for payloads in byte
    /// order `endian` from a producer whose `sizeof(long)` is `long_size`.
    pub fn from_formats(
        formats: impl IntoIterator<Item = Format>,
        endian: Endianness,
        long_size: usize,
    ) -> Self {
        let by_id: HashMap<u16, Format> = formats.into_iter().map(|f| (f.id, f)).collect();
        // libtraceevent finds `common_type` where its first event (lowest id) has it.
        let type_field = by_id
            .iter()
            .min_by_key(|(id, _)| **id)
            .and_then(|(_, f)| {
                f.fields
                    .iter()
                    .find(|x| x.common && x.name == "common_type")
            })
            .map_or((0, 2), |f| (f.offset, f.size));
        Formats {
            by_id,
            endian,
            long_size,
            printk: HashMap::new(),
            type_field,
        }
    }

    /// Adds the kernel's `printk_formats` text (`0xffffffff8281aa07 : "thaw_processes"`
    /// lines), which `%s` of a string pointer and bprint events print from.
    pub fn with_printk_formats(mut self, text: &str) -> Self {
        self.printk.extend(parse_printk(text));
        self
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

    /// The formats whose `print fmt` libtraceevent 6.1 does not parse (perf prints
    /// their samples as `[FAILED TO PARSE]` and the fields), and why, by id.
    pub fn unparsed(&self) -> impl Iterator<Item = (&Format, &PrintFmtError)> {
        let mut v: Vec<_> = self
            .by_id
            .values()
            .filter_map(|f| f.print.as_ref().err().map(|e| (f, e)))
            .collect();
        v.sort_by_key(|(f, _)| f.id);
        v.into_iter()
    }

    /// True when the tracing data held no format that parses (no tracepoint event can
    /// be read by field).
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The `common_type` of a RAW sample (`None` when the payload is too short).
    pub fn event_type(&self, raw: &[u8]) -> Option<u64> {
        let (at, size) = self.type_field;
        if !matches!(size, 1 | 2 | 4 | 8) {
            return Some(0);
        }
        read_uint(raw, at, size, self.endian)
    }

    /// The format of a RAW sample, by its `common_type`.
    pub fn format_of(&self, raw: &[u8]) -> Option<&Format> {
        let id = u16::try_from(self.event_type(raw)?).ok()?;
        self.get(id)
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

    /// perf script's `trace` text of a RAW sample (`prev_comm=perf prev_pid=…`),
    /// appended to `out`, and the format that printed it. The bytes are perf's; text
    /// that is not UTF-8 (a binary comm) has its invalid sequences replaced
    /// ([`Formats::write_trace`] keeps them). On error `out` is left as it was.
    pub fn print_trace(
        &self,
        raw: &[u8],
        kernel: &dyn KernelSymbols,
        out: &mut String,
    ) -> Result<&Format, TraceError> {
        let mut bytes = vec![];
        let format = self.write_trace(raw, kernel, &mut bytes)?;
        out.push_str(&String::from_utf8_lossy(&bytes));
        Ok(format)
    }

    /// [`Formats::print_trace`] as bytes, exactly as perf writes them.
    pub fn write_trace(
        &self,
        raw: &[u8],
        kernel: &dyn KernelSymbols,
        out: &mut Vec<u8>,
    ) -> Result<&Format, TraceError> {
        let id = self
            .event_type(raw)
            .ok_or(TraceError::NoEventType { len: raw.len() })?;
        let format = u16::try_from(id)
            .ok()
            .and_then(|id| self.get(id))
            .ok_or(TraceError::UnknownEvent { id })?;
        let env = Env {
            raw,
            endian: self.endian,
            long_size: self.long_size,
            format,
            printk: &self.printk,
            kernel,
        };
        let start = out.len();
        let done = match &format.print {
            Ok(p) => env.write(p, out),
            Err(_) => {
                out.extend_from_slice(b"[FAILED TO PARSE]");
                env.fields(out)
            }
        };
        if let Err(e) = done {
            out.truncate(start);
            return Err(e);
        }
        Ok(format)
    }
}

/// `header_page`'s `commit` field size (`field: local_t commit; offset:8; size:8;`),
/// which libtraceevent takes for the producer's `sizeof(long)`.
fn header_page_long(text: &str) -> Option<usize> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("field:")?;
        let mut parts = rest.split(';').map(str::trim);
        let decl = parts.next()?;
        if decl.split_whitespace().last() != Some("commit") {
            return None;
        }
        parts.find_map(|p| p.strip_prefix("size:")?.trim().parse().ok())
    })
}

/// `printk_formats` lines (`ADDR : "text"`), as perf's `parse_ftrace_printk` and
/// libtraceevent's `tep_register_print_string` read them: the address in hex, the
/// text after `: `, its quotes and a trailing `\n` (backslash, n) removed.
fn parse_printk(text: &str) -> HashMap<u64, String> {
    let mut out = HashMap::new();
    for line in text.split('\n').filter(|l| !l.is_empty()) {
        let Some((addr, fmt)) = line.split_once(':') else {
            continue;
        };
        let addr = addr.trim();
        let addr = addr
            .strip_prefix("0x")
            .or_else(|| addr.strip_prefix("0X"))
            .unwrap_or(addr);
        let hex: String = addr.chars().take_while(char::is_ascii_hexdigit).collect();
        let addr =
            u64::from_str_radix(&hex, 16).unwrap_or(if hex.is_empty() { 0 } else { u64::MAX });
        let mut s = fmt.get(1..).unwrap_or("");
        s = s.strip_prefix('"').unwrap_or(s);
        // A `\n` goes only with the closing quote (libtraceevent's pointer arithmetic).
        if let Some(t) = s.strip_suffix('"') {
            s = t.strip_suffix("\\n").unwrap_or(t);
        }
        out.insert(addr, s.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printk_lines() {
        let p = parse_printk(
            "0xffffffff8281aa07 : \"thaw_processes\"\n0x10 : \"a: b\\n\"\n\n0x11 : \"\"\n",
        );
        assert_eq!(p[&0xffff_ffff_8281_aa07], "thaw_processes");
        assert_eq!(p[&0x10], "a: b");
        assert_eq!(p[&0x11], "");
    }

    #[test]
    fn long_size_from_header_page() {
        let hp = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
                  \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n";
        assert_eq!(header_page_long(hp), Some(8));
        assert_eq!(header_page_long(""), None);
    }
}
