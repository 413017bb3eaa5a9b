//! Tracepoint RAW samples against `perf script -F trace`: the event format files carried
//! in the TRACING_DATA (decoded by perfdata) give each field's offset, size and sign; the
//! field values read from our decoded RAW bytes are compared with the `name=value` pairs
//! perf prints. This checks RAW data and TRACING_DATA together. Fields that perf prints
//! through a print-format helper (e.g. `prev_state=R+`) are not numbers and are skipped.

use crate::facts::{num, Facts, Val};
use perfdata::tracepoint::FieldValue;
pub use perfdata::tracepoint::{Field, Format, Formats};

/// The value of `field` in `raw` as a fact: numbers and strings as perf prints plain
/// fields (`None` for arrays and bytes, which perf prints through helpers).
pub fn field_value(raw: &[u8], field: &Field, e: perfdata::rt::Endianness) -> Option<Val> {
    match perfdata::tracepoint::field_value(raw, field, e)? {
        FieldValue::Signed(v) => Some(Val::Num(i128::from(v))),
        FieldValue::Unsigned(v) => Some(Val::Num(i128::from(v))),
        FieldValue::Text(t) => Some(Val::Text(t)),
        FieldValue::SignedArray(_) | FieldValue::UnsignedArray(_) | FieldValue::Bytes(_) => None,
    }
}

/// Splits perf's trace text into `name=value` pairs for the known field names (a value
/// runs up to the next ` known_name=`).
pub fn split_pairs<'t>(text: &'t str, names: &[&'t str]) -> Vec<(&'t str, &'t str)> {
    let mut starts = vec![];
    let bytes = text.as_bytes();
    for n in names {
        let pat = format!("{n}=");
        let mut from = 0;
        while let Some(i) = text[from..].find(&pat) {
            let at = from + i;
            if at == 0 || bytes[at - 1] == b' ' {
                starts.push((at, *n));
            }
            from = at + pat.len();
        }
    }
    starts.sort_unstable();
    starts.dedup_by_key(|s| s.0);
    let mut out = vec![];
    for (i, &(at, n)) in starts.iter().enumerate() {
        let vstart = at + n.len() + 1;
        let vend = starts.get(i + 1).map_or(text.len(), |s| s.0);
        out.push((n, text[vstart..vend].trim_end()));
    }
    out
}

/// perf's and our facts for one sample's trace text: fields perf printed as a plain
/// number or string. Returns (perf, ours, skipped).
pub fn trace_facts(
    text: &str,
    raw: &[u8],
    fmt: &Format,
    e: perfdata::rt::Endianness,
) -> (Facts, Facts, usize) {
    let names: Vec<&str> = fmt.fields.iter().map(|f| f.name.as_str()).collect();
    let mut perf = Facts::new();
    let mut ours = Facts::new();
    let mut skipped = 0;
    for (name, value) in split_pairs(text, &names) {
        let Some(field) = fmt.fields.iter().find(|f| f.name == name) else {
            continue;
        };
        let mine = field_value(raw, field, e);
        let theirs = if field.char_array || field.data_loc_string {
            Some(Val::Text(value.to_string()))
        } else {
            num(value).map(Val::Num)
        };
        match theirs {
            Some(t) => {
                perf.push(name, t);
                ours.push(name, mine.unwrap_or(Val::Text("(unreadable)".into())));
            }
            None => skipped += 1,
        }
    }
    (perf, ours, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_format(text: &str) -> Option<Format> {
        perfdata::tracepoint::parse_format(text)
    }

    const FORMAT: &str = "name: sched_switch\nID: 316\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\nprint fmt: \"...\"\n";

    #[test]
    fn format_and_values() {
        let f = parse_format(FORMAT).unwrap();
        assert_eq!(f.id, 316);
        assert_eq!(f.fields.len(), 5);
        assert!(f.fields[2].char_array);
        let mut raw = vec![0u8; 40];
        raw[0] = 0x3c;
        raw[1] = 0x01;
        raw[8..12].copy_from_slice(b"perf");
        raw[24..28].copy_from_slice(&(-5i32).to_le_bytes());
        let (p, o, skipped) = trace_facts(
            "prev_comm=perf prev_pid=-5 prev_state=R+ ==> x",
            &raw,
            &f,
            perfdata::rt::Endianness::Little,
        );
        assert_eq!(skipped, 1);
        assert_eq!(p.list, o.list);
        assert_eq!(p.len(), 2);
        // A wrong value is caught.
        raw[24] = 7;
        let (p, o, _) = trace_facts(
            "prev_comm=perf prev_pid=-5",
            &raw,
            &f,
            perfdata::rt::Endianness::Little,
        );
        assert_ne!(p.list, o.list);
    }

    #[test]
    fn pairs_with_spaces() {
        let p = split_pairs(
            "prev_comm=Web Content prev_pid=1",
            &["prev_comm", "prev_pid"],
        );
        assert_eq!(p, [("prev_comm", "Web Content"), ("prev_pid", "1")]);
    }
}
