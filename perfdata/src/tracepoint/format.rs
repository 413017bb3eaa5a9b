//! One event format file (`events/<system>/<event>/format`): the event's name, id and
//! fields, each field's place in the RAW data, and its `print fmt:` line parsed.

use super::print::lex::{Kind, Lexer};
use super::print::{num, PrintFmt, PrintFmtError};
use crate::rt::{get_u16, get_u32, get_u64, Endianness};

/// One field of an event format file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name: the declaration's last identifier (`prev_comm`, `name` of
    /// `__data_loc char[] name`).
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
    /// `__data_loc char[] x`: u32 (offset | len << 16) pointing to a string
    /// (`__rel_loc`: the offset counts from the end of the field).
    pub data_loc_string: bool,
    /// `type x[N]` (not char): N elements of `size / N` bytes.
    pub array_len: Option<usize>,
    /// One of the common fields (`common_type`, `common_pid`…): the file's first block.
    pub common: bool,
    /// The type as libtraceevent reads the declaration: `char[16]`,
    /// `__data_loc char[]`, `const char *`.
    pub ty: String,
    /// Bytes per element as libtraceevent counts them (`x[i]` in a print format reads
    /// that many): `size / N` for `x[N]`, the element type's size for a `__data_loc`
    /// array of `u8`…`s64`/`char` (0 for other types), `size` for a scalar.
    pub element_size: usize,
    /// What libtraceevent makes of the type.
    pub traits: FieldTraits,
}

/// How libtraceevent classes a field's type (it decides how an unformatted field
/// prints, and what `%s` of a field prints).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FieldTraits {
    /// A `*` in the type.
    pub pointer: bool,
    /// `[…]` in the declaration.
    pub array: bool,
    /// An array of `char`, `u8` or `s8`.
    pub string: bool,
    /// `__data_loc` or `__rel_loc`: the data lies after the fixed fields.
    pub dynamic: bool,
    /// `__rel_loc`: the locator's offset counts from the end of the field.
    pub relative: bool,
    /// `long` in the type.
    pub long: bool,
}

/// An event format: its system, name, `ID:`, fields and print format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// The event's system (`sched`; `ftrace` for ftrace's own events), as the tracing
    /// data names it; empty when unknown ([`parse_format`]).
    pub system: String,
    /// The event's name (`name:`), without its system (`sched_switch`).
    pub name: String,
    /// The tracepoint id (`ID:`): `attr.config` of the event and the RAW data's
    /// `common_type`.
    pub id: u16,
    /// The fields in the file's order, common fields (`common_type`, `common_pid`…)
    /// first.
    pub fields: Vec<Field>,
    /// The `print fmt:` line parsed as libtraceevent 6.1 parses it, or why it does not
    /// parse (perf then prints `[FAILED TO PARSE]` and the fields; so does
    /// [`Formats::print_trace`](super::Formats::print_trace)).
    pub print: Result<PrintFmt, PrintFmtError>,
    /// Per field, whether libtraceevent has stopped printing it as text: when a format
    /// does not parse, its `tep_print_field` prints a char array holding a byte that is
    /// not printable as `ARRAY[…]`, and from then on every value of that field, for
    /// the rest of the run.
    pub(crate) shown_as_array: Sticky,
}

/// Flags that, once set, stay set for the life of the formats (shared by the threads
/// printing; clones copy the current values; compared equal whatever they hold).
#[derive(Default)]
pub(crate) struct Sticky(Vec<std::sync::atomic::AtomicBool>);

impl Sticky {
    fn new(n: usize) -> Self {
        Sticky((0..n).map(|_| Default::default()).collect())
    }

    pub(crate) fn get(&self, i: usize) -> bool {
        self.0
            .get(i)
            .is_some_and(|b| b.load(std::sync::atomic::Ordering::Relaxed))
    }

    pub(crate) fn set(&self, i: usize) {
        if let Some(b) = self.0.get(i) {
            b.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl Clone for Sticky {
    fn clone(&self) -> Self {
        Sticky(
            (0..self.0.len())
                .map(|i| std::sync::atomic::AtomicBool::new(self.get(i)))
                .collect(),
        )
    }
}

impl PartialEq for Sticky {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Sticky {}

impl std::fmt::Debug for Sticky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set: Vec<usize> = (0..self.0.len()).filter(|&i| self.get(i)).collect();
        f.debug_tuple("Sticky").field(&set).finish()
    }
}

impl Format {
    /// Parses one format file of system `system` (`ftrace` for ftrace's own events,
    /// which libtraceevent reads slightly differently) recorded where `sizeof(long)` is
    /// `long_size`. `None` without an `ID:` line.
    pub fn parse(system: &str, text: &str, long_size: usize) -> Option<Format> {
        let ftrace = system == "ftrace";
        let mut name = String::new();
        let mut id = None;
        let mut fields = vec![];
        let mut bad_decl = None;
        // Fields before the first blank line after `format:` are the common ones.
        let mut block = 0;
        let mut print_at = None;
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let t = line.trim();
            if let Some(n) = t.strip_prefix("name: ") {
                name = n.to_string();
            } else if let Some(n) = t.strip_prefix("ID: ") {
                id = n.trim().parse().ok();
            } else if t.starts_with("format:") {
                block = 1;
            } else if t.is_empty() {
                if block == 1 && fields.iter().any(|f: &Field| f.common) {
                    block = 2;
                }
            } else if let Some(rest) = t.strip_prefix("field:") {
                match parse_field(rest, block <= 1, ftrace, long_size) {
                    Some(f) => fields.push(f),
                    None => bad_decl = bad_decl.or_else(|| Some(rest.to_string())),
                }
            } else if t.starts_with("print fmt:") && print_at.is_none() {
                print_at = Some(at + (line.len() - line.trim_start().len()));
            }
            at += line.len();
        }
        let print = match (bad_decl, print_at) {
            (Some(d), _) => Err(PrintFmtError::BadField(d)),
            (None, None) => Err(PrintFmtError::Missing),
            (None, Some(p)) => PrintFmt::parse(&text.as_bytes()[p..], &fields, ftrace, &name),
        };
        Some(Format {
            system: system.to_string(),
            name,
            id: id?,
            shown_as_array: Sticky::new(fields.len()),
            fields,
            print,
        })
    }

    /// A field by name as `REC->name` finds it: common fields first.
    pub fn field(&self, name: &str) -> Option<&Field> {
        let named = |common: bool| {
            self.fields
                .iter()
                .find(move |f| f.common == common && f.name == name)
        };
        named(true).or_else(|| named(false))
    }
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

/// Parses one `events/<sys>/<event>/format` file (`None` without an `ID:` line), of an
/// unknown system on a 64-bit producer ([`Format::parse`] names both).
pub fn parse_format(text: &str) -> Option<Format> {
    Format::parse("", text, 8)
}

fn parse_field(rest: &str, common: bool, ftrace: bool, long_size: usize) -> Option<Field> {
    let mut decl = "";
    let mut offset = None;
    let mut size: Option<usize> = None;
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
    let tep = TepDecl::parse(decl, ftrace)?;
    let is_char = tep
        .ty
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| w == "char");
    let data_loc = tep.traits.dynamic;
    let bracket = (!data_loc && tep.traits.array).then_some(tep.array_len);
    let char_array = is_char && bracket.is_some();
    let array_len = bracket.filter(|_| !is_char).filter(|&n| n > 0);
    let t = tep.traits;
    let element_size = if !t.array {
        size
    } else if let Some(each) = size.checked_div(tep.array_len) {
        each
    } else if t.dynamic {
        tep.dynamic_element
    } else if t.string {
        1
    } else if t.long {
        long_size
    } else {
        0
    };
    Some(Field {
        name: tep.name,
        decl: decl.to_string(),
        offset,
        size,
        signed,
        char_array,
        data_loc_string: data_loc && is_char,
        array_len,
        common,
        ty: tep.ty,
        element_size,
        traits: tep.traits,
    })
}

/// A declaration as libtraceevent's `event_read_fields` reads it.
struct TepDecl {
    name: String,
    ty: String,
    traits: FieldTraits,
    /// The last number in the brackets (0 for `[]`).
    array_len: usize,
    /// The element size of `__data_loc T[] x` when T is `u8`…`s64` or `char`.
    dynamic_element: usize,
}

impl TepDecl {
    fn parse(decl: &str, ftrace: bool) -> Option<TepDecl> {
        let text = format!("{decl};");
        let mut lex = Lexer::new(text.as_bytes());
        let mut next = || lex.token().ok();
        let first = next()?;
        if first.kind != Kind::Item {
            return None;
        }
        let mut last = first.text;
        let mut ty: Option<String> = None;
        let mut pointer = false;
        let mut delim = " ";
        let mut t;
        loop {
            t = next()?;
            if t.kind == Kind::Item || t.is(Kind::Op, "*") || (ftrace && t.is(Kind::Op, ".")) {
                pointer |= t.text == "*";
                ty = Some(match ty {
                    Some(x) => format!("{x}{delim}{last}"),
                    None => last,
                });
                last = t.text;
                delim = " ";
                continue;
            }
            if t.kind == Kind::Delim && last == "__attribute__" && t.text == "(" {
                let mut s = ty.take()?;
                s.push(' ');
                s.push_str(&last);
                s.push('(');
                let mut depth = 1;
                delim = " ";
                loop {
                    let a = next()?;
                    if a.kind == Kind::None {
                        break;
                    }
                    if a.kind == Kind::Delim {
                        match a.text.as_str() {
                            "(" => depth += 1,
                            ")" => depth -= 1,
                            _ => {}
                        }
                        if depth == 0 {
                            break;
                        }
                        s.push_str(&a.text);
                        delim = "";
                    } else {
                        s.push_str(delim);
                        s.push_str(&a.text);
                        delim = " ";
                    }
                    last = a.text;
                }
                ty = Some(s);
                continue;
            }
            break;
        }
        let mut ty = ty?;
        let mut name = last;
        if t.kind != Kind::Op {
            return None;
        }
        let mut array = false;
        let mut array_len = 0;
        let mut dynamic_element = 0;
        if t.text == "[" {
            array = true;
            let mut last_kind = t.kind;
            let mut brackets = String::from("[");
            t = next()?;
            while t.text != "]" {
                if t.kind == Kind::None {
                    return None;
                }
                if last_kind == Kind::Item && t.kind == Kind::Item {
                    brackets.push(' ');
                }
                last_kind = t.kind;
                brackets.push_str(&t.text);
                array_len = num::strtoull(&t.text) as usize;
                t = next()?;
            }
            brackets.push(']');
            t = next()?;
            if t.kind == Kind::Item {
                ty = format!("{ty} {name}{brackets}");
                dynamic_element = match name.as_str() {
                    "u8" | "s8" | "char" => 1,
                    "u16" | "s16" => 2,
                    "u32" | "s32" => 4,
                    "u64" | "s64" => 8,
                    _ => 0,
                };
                name = t.text;
                t = next()?;
            } else {
                ty.push_str(&brackets);
            }
        }
        if !t.is(Kind::Op, ";") {
            return None;
        }
        let relative = ty.starts_with("__rel_loc");
        let traits = FieldTraits {
            pointer,
            array,
            string: array && (ty.contains("char") || ty.contains("u8") || ty.contains("s8")),
            dynamic: ty.starts_with("__data_loc") || relative,
            relative,
            long: ty.contains("long"),
        };
        Some(TepDecl {
            name,
            ty,
            traits,
            array_len,
            dynamic_element,
        })
    }
}

/// The unsigned integer of `size` (1, 2, 4 or 8) bytes at `at`, `None` outside `raw`.
pub fn read_uint(raw: &[u8], at: usize, size: usize, e: Endianness) -> Option<u64> {
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

/// Where a field's value lies in a payload, not copied out of it ([`field_bytes`]): for
/// a reader that puts values straight into its own storage. [`field_value`] is made of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldBytes<'r> {
    /// A char array or `__data_loc char[]` string: its bytes (the text ends at the first
    /// NUL).
    Text(&'r [u8]),
    /// An integer of 1, 2, 4 or 8 bytes: its bits, sign-extended when the field is signed.
    Int(u64),
    /// A fixed array of integers of `each` (1, 2, 4 or 8) bytes: [`int_elements`].
    Ints {
        /// The array's bytes.
        bytes: &'r [u8],
        /// Bytes per element.
        each: usize,
        /// Whether the elements are signed.
        signed: bool,
    },
    /// Anything else (a `__data_loc` array that is not a string, an odd size): the bytes.
    Bytes(&'r [u8]),
}

/// The integers of `each` (1, 2, 4 or 8) bytes in `bytes` (byte order `e`), as their
/// bits, sign-extended when `signed`.
pub fn int_elements(
    bytes: &[u8],
    each: usize,
    signed: bool,
    e: Endianness,
) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks_exact(each.max(1)).map(move |c| {
        let v = read_uint(c, 0, each, e).unwrap_or(0);
        if signed {
            sign_extend(v, each) as u64
        } else {
            v
        }
    })
}

/// Where the value of `field` lies in `raw` (RAW data in byte order `e`); `None` when
/// the field lies outside `raw`.
pub fn field_bytes<'r>(raw: &'r [u8], field: &Field, e: Endianness) -> Option<FieldBytes<'r>> {
    let end = field.offset.checked_add(field.size)?;
    let bytes = raw.get(field.offset..end)?;
    if field.char_array {
        return Some(FieldBytes::Text(bytes));
    }
    if field.traits.dynamic {
        let loc = read_uint(raw, field.offset, 4, e)?;
        let (mut off, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
        if field.traits.relative {
            off += end;
        }
        let data = raw.get(off..off + len)?;
        return Some(if field.data_loc_string {
            FieldBytes::Text(data)
        } else {
            FieldBytes::Bytes(data)
        });
    }
    if let Some(n) = field.array_len {
        // An array of no element (`int x[0]`) is its bytes (none), not a division by zero.
        let each = field.size.checked_div(n).unwrap_or(0);
        if each * n == field.size && matches!(each, 1 | 2 | 4 | 8) {
            return Some(FieldBytes::Ints {
                bytes,
                each,
                signed: field.signed,
            });
        }
        return Some(FieldBytes::Bytes(bytes));
    }
    if !matches!(field.size, 1 | 2 | 4 | 8) {
        return Some(FieldBytes::Bytes(bytes));
    }
    let v = read_uint(bytes, 0, field.size, e)?;
    Some(FieldBytes::Int(if field.signed {
        sign_extend(v, field.size) as u64
    } else {
        v
    }))
}

/// The value of `field` in `raw` (RAW data in byte order `e`); `None` when the
/// field lies outside `raw`.
pub fn field_value<'r>(raw: &'r [u8], field: &Field, e: Endianness) -> Option<FieldValue<'r>> {
    Some(match field_bytes(raw, field, e)? {
        FieldBytes::Text(b) => FieldValue::Text(c_string(b)),
        FieldBytes::Int(v) if field.signed => FieldValue::Signed(v as i64),
        FieldBytes::Int(v) => FieldValue::Unsigned(v),
        FieldBytes::Ints {
            bytes,
            each,
            signed: true,
        } => FieldValue::SignedArray(
            int_elements(bytes, each, true, e)
                .map(|v| v as i64)
                .collect(),
        ),
        FieldBytes::Ints { bytes, each, .. } => {
            FieldValue::UnsignedArray(int_elements(bytes, each, false, e).collect())
        }
        FieldBytes::Bytes(b) => FieldValue::Bytes(b),
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
    fn an_array_of_no_element_is_its_bytes_not_a_division_by_zero() {
        let f = parse_format(
            "name: empty\nID: 9\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\
\tfield:int none[0];\toffset:8;\tsize:0;\tsigned:1;\n\nprint fmt: \"\"\n",
        )
        .unwrap();
        // However a format says it (the parser reads `[0]` as no array), a field of
        // zero elements reads as no bytes.
        let mut none = f.fields[1].clone();
        none.array_len = Some(0);
        let raw = [0u8; 8];
        assert_eq!(
            field_bytes(&raw, &none, Endianness::Little),
            Some(FieldBytes::Bytes(&[]))
        );
    }

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
        let formats = crate::tracepoint::Formats::from_formats([f], Endianness::Little, 8);
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
