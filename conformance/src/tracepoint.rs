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

/// Check 20 on a live recording with tracepoint events: [`tables_against_trace`]
/// against the system perf's text.
pub fn check_tables(path: &std::path::Path, dir: &std::path::Path) -> crate::checks::Outcome {
    use crate::checks::Outcome;
    let has_tracepoints = perfdata::Recording::open(path)
        .ok()
        .and_then(|r| {
            let d = r.data().ok()?;
            Some(
                (d.session.attrs.iter())
                    .any(|a| a.attr.type_ == perfdata::types::AttrType::TRACEPOINT),
            )
        })
        .unwrap_or(false);
    if !has_tracepoints {
        return Outcome::Skip("no tracepoint event".into());
    }
    let args = crate::analyses::os_args(
        &[
            "script",
            "-F",
            "pid,tid,cpu,time,event,trace",
            "--ns",
            "--hide-call-graph",
            "-i",
        ],
        path,
    );
    let theirs = match crate::analyses::perf_stdout(dir, &args) {
        Ok(t) => String::from_utf8_lossy(&t).into_owned(),
        Err(why) => return Outcome::Skip(why),
    };
    match tables_against_trace(path, &theirs) {
        Ok((n, problems)) if problems.is_empty() => {
            Outcome::Pass(format!("{n} values of {} rows", theirs.lines().count()))
        }
        Ok((_, problems)) => Outcome::Fail(problems),
        Err(e) => Outcome::Fail(vec![format!("ours: {e}")]),
    }
}

/// The tracepoint tables of `recording` (`perfdata_analysis::export::tracepoints`, what
/// the Parquet export, `Recording.tracepoints()` and Spark read) against `perf script -F
/// pid,tid,cpu,time,event,trace --ns` of it (`perf_text`): row by row, in each event's
/// order, the sample's tid, cpu and time, and every field perf prints as a plain
/// `name=value` (a number, or a string of a `char[]` field) equal to the row's column.
/// Returns how many values were compared, and the differences (at most a few dozen).
pub fn tables_against_trace(
    recording: &std::path::Path,
    perf_text: &str,
) -> Result<(usize, Vec<String>), perfdata_analysis::AnalysisError> {
    use arrow_array::cast::AsArray;
    use arrow_array::{Array, RecordBatch};
    use perfdata_analysis::export::tables::TableBuilder;
    use perfdata_analysis::export::tracepoints::tracepoint_events;
    let rec = perfdata::Recording::open(recording)?;
    let opts = perfdata_analysis::AnalyzerOptions {
        no_symbols: true,
        ..Default::default()
    };
    let mut a = perfdata_analysis::Analyzer::open(&rec, &opts)?;
    let events = tracepoint_events(&a.data, &a.events);
    let mut tables = TableBuilder::new(a.events.clone(), false)
        .with_sample_columns(&[])
        .with_tracepoints(events.clone());
    a.run(perfdata_analysis::RunOptions::default(), |m, item| {
        tables.add(m, item).map(|()| true)
    })?;
    let mut batches: Vec<Option<RecordBatch>> = vec![];
    for i in 0..events.len() {
        batches.push(tables.take_tracepoints(i, 0)?);
    }
    let mut next_row = vec![0usize; events.len()];
    let (mut compared, mut problems) = (0usize, vec![]);
    let mut problem = |p: String| {
        if problems.len() < 40 {
            problems.push(p);
        }
    };
    // A column's value in a row, as perf would print it plainly.
    let value = |b: &RecordBatch, col: &str, row: usize| -> Option<Val> {
        let c = b.column_by_name(col)?;
        if c.is_null(row) {
            return None;
        }
        use arrow_schema::DataType as T;
        Some(match c.data_type() {
            T::Utf8 => Val::Text(c.as_string::<i32>().value(row).to_string()),
            T::Int8 => Val::Num(
                c.as_primitive::<arrow_array::types::Int8Type>()
                    .value(row)
                    .into(),
            ),
            T::Int16 => Val::Num(
                c.as_primitive::<arrow_array::types::Int16Type>()
                    .value(row)
                    .into(),
            ),
            T::Int32 => Val::Num(
                c.as_primitive::<arrow_array::types::Int32Type>()
                    .value(row)
                    .into(),
            ),
            T::Int64 => Val::Num(
                c.as_primitive::<arrow_array::types::Int64Type>()
                    .value(row)
                    .into(),
            ),
            T::UInt8 => Val::Num(
                c.as_primitive::<arrow_array::types::UInt8Type>()
                    .value(row)
                    .into(),
            ),
            T::UInt16 => Val::Num(
                c.as_primitive::<arrow_array::types::UInt16Type>()
                    .value(row)
                    .into(),
            ),
            T::UInt32 => Val::Num(
                c.as_primitive::<arrow_array::types::UInt32Type>()
                    .value(row)
                    .into(),
            ),
            T::UInt64 => Val::Num(
                c.as_primitive::<arrow_array::types::UInt64Type>()
                    .value(row)
                    .into(),
            ),
            _ => return None,
        })
    };
    for (n, line) in perf_text.lines().enumerate() {
        // ` 3597/3597  [000]   633.463285886: sched:sched_switch: prev_comm=…`
        let Some((head, rest)) = line.split_once("]") else {
            continue;
        };
        let Some((pid_tid, cpu)) = head.trim().split_once("[") else {
            continue;
        };
        let Some((_, tid)) = pid_tid.trim().split_once('/') else {
            continue;
        };
        let Some((time, rest)) = rest.trim_start().split_once(": ") else {
            continue;
        };
        let Some((event, trace)) = rest.split_once(": ") else {
            continue;
        };
        // perf pads the event column to the longest name.
        let event = event.trim();
        let Some(e) = events.iter().position(|ev| ev.name == event) else {
            problem(format!("line {}: event {event}: no table of it", n + 1));
            continue;
        };
        let Some(b) = &batches[e] else {
            problem(format!("line {}: {event}: the table has no row", n + 1));
            continue;
        };
        let row = next_row[e];
        next_row[e] += 1;
        if row >= b.num_rows() {
            problem(format!(
                "line {}: {event}: the table has {} rows only",
                n + 1,
                b.num_rows()
            ));
            continue;
        }
        let ns = time.split_once('.').and_then(|(s, f)| {
            Some(s.trim().parse::<i128>().ok()? * 1_000_000_000 + f.parse::<i128>().ok()?)
        });
        let expect = [
            ("common_tid", num(tid).map(Val::Num)),
            ("common_cpu", num(cpu).map(Val::Num)),
            ("common_time", ns.map(Val::Num)),
        ];
        let fmt = &events[e].format;
        let names: Vec<&str> = fmt.fields.iter().map(|f| f.name.as_str()).collect();
        let pairs = split_pairs(trace, &names)
            .into_iter()
            .filter_map(|(name, v)| {
                let field = fmt.fields.iter().find(|f| f.name == name)?;
                if field.char_array || field.data_loc_string {
                    return Some((name, Some(Val::Text(v.to_string())), None));
                }
                // `%x` prints hex without `0x`: either reading may be the field's.
                let hex = i128::from_str_radix(v.trim(), 16).ok().map(Val::Num);
                num(v).map(|x| (name, Some(Val::Num(x)), hex))
            });
        let checks = expect.into_iter().map(|(c, v)| (c, v, None)).chain(pairs);
        for (col, theirs, alt) in checks {
            let Some(theirs) = theirs else { continue };
            let ours = value(b, col, row);
            compared += 1;
            if ours.as_ref() != Some(&theirs) && (alt.is_none() || ours != alt) {
                let ours = ours.map_or("null".to_string(), |v| v.to_string());
                problem(format!(
                    "line {}: {event} row {row}: {col}: perf {theirs}, ours {ours}",
                    n + 1
                ));
            }
        }
    }
    for (e, b) in batches.iter().enumerate() {
        let rows = b.as_ref().map_or(0, RecordBatch::num_rows);
        if next_row[e] != rows {
            problem(format!(
                "{}: perf printed {} samples, the table has {rows} rows",
                events[e].name, next_row[e]
            ));
        }
    }
    Ok((compared, problems))
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
