//! One table per tracepoint event: a row per sample, a column per field of the event's
//! format, typed as the format declares it, after the sample's own columns. What the
//! Parquet export writes under `tracepoints/EVENT/` and the Python package's
//! `Recording.tracepoints()` streams (schema: `docs/parquet-export.md`).
//!
//! Column names follow perf's Python handlers: the sample's own values are `common_*`
//! (`common_time`, `common_cpu`, `common_comm`…) beside the format's own `common_*`
//! fields (`common_pid` is the task the kernel wrote the event for), so no field of
//! any event (`comm`, `pid`, `cpu` of `sched_wakeup` or `workqueue_*`) is renamed.

use crate::sample::SampleInfo;
use crate::AnalysisError as Error;
use arrow_array::builder::{ArrayBuilder, BinaryBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, Int16Array, Int32Array, Int64Array, Int8Array, ListArray, RecordBatch, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field as ArrowField, Schema, SchemaRef};
use perfdata::tracepoint::{field_bytes, int_elements, Field, FieldBytes, Format, Formats};
use perfdata::types::{AttrType, SampleType};
use perfdata::{Endianness, PerfData};
use std::sync::Arc;

/// A tracepoint event of a recording, and the format its samples are read by.
#[derive(Debug, Clone)]
pub struct TracepointEvent {
    /// Its attr's index in the recording.
    pub event: usize,
    /// Its name as the analyses give it (`sched:sched_switch`).
    pub name: String,
    /// Its format (from the recording's tracing data).
    pub format: Format,
    /// Its samples carry a call chain: the table has a `common_stack_id` column.
    pub callchain: bool,
}

/// The tracepoint events of a recording that its tracing data has a format for, in attr
/// order. `names` are the events' names by attr index ([`crate::Analyzer::events`]).
/// Empty without tracing data.
pub fn tracepoint_events(data: &PerfData<'_>, names: &[String]) -> Vec<TracepointEvent> {
    match tracepoint_formats(data) {
        Some(formats) => events_of(data, names, &formats),
        None => vec![],
    }
}

/// [`tracepoint_events`] with the formats given (a pipe's, found in its stream).
pub fn events_of(data: &PerfData<'_>, names: &[String], formats: &Formats) -> Vec<TracepointEvent> {
    let mut out = vec![];
    for (i, a) in data.session.attrs.iter().enumerate() {
        if a.attr.type_ != AttrType::TRACEPOINT {
            continue;
        }
        let Some(format) = u16::try_from(a.attr.config)
            .ok()
            .and_then(|id| formats.get(id))
        else {
            continue;
        };
        out.push(TracepointEvent {
            event: i,
            name: names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("{}:{}", format.system, format.name)),
            format: format.clone(),
            callchain: a.attr.sample_type.contains(SampleType::CALLCHAIN),
        });
    }
    out
}

/// A recording's tracing data: from its header, or (a pipe) from the
/// HEADER_TRACING_DATA record at the start of its stream.
pub fn tracepoint_formats(data: &PerfData<'_>) -> Option<Formats> {
    if let Some(f) = Formats::of_file(data) {
        return Some(f);
    }
    let mut found = None;
    let endian = data.format.endian;
    // A pipe writes its tracing data before the first sample: stop there.
    let _ = data.for_each_record(&mut |_, rec, _| {
        if rec.record_type() == perfdata::types::RecordType::HEADER_TRACING_DATA {
            found = Formats::of_record(&rec, endian);
            return Ok(false);
        }
        Ok(rec.record_type() != perfdata::types::RecordType::SAMPLE)
    });
    found
}

/// The Arrow type of a format field: integers of their width and sign (pointers
/// unsigned), `char[]` and `__data_loc char[]` strings, other arrays lists of their
/// elements, anything else (an odd size, a `__data_loc` array of structs) bytes.
pub fn field_type(f: &Field) -> DataType {
    if f.char_array || f.data_loc_string {
        return DataType::Utf8;
    }
    if f.traits.dynamic {
        return match element(f.element_size, f.signed) {
            Some(t) => list_of(t),
            None => DataType::Binary,
        };
    }
    if let Some(n) = f.array_len {
        let each = f.size.checked_div(n).unwrap_or(0);
        return match element(each, f.signed).filter(|_| each * n == f.size) {
            Some(t) => list_of(t),
            None => DataType::Binary,
        };
    }
    element(f.size, f.signed && !f.traits.pointer).unwrap_or(DataType::Binary)
}

fn element(size: usize, signed: bool) -> Option<DataType> {
    Some(match (size, signed) {
        (1, true) => DataType::Int8,
        (2, true) => DataType::Int16,
        (4, true) => DataType::Int32,
        (8, true) => DataType::Int64,
        (1, false) => DataType::UInt8,
        (2, false) => DataType::UInt16,
        (4, false) => DataType::UInt32,
        (8, false) => DataType::UInt64,
        _ => return None,
    })
}

fn list_of(t: DataType) -> DataType {
    DataType::List(Arc::new(ArrowField::new("item", t, true)))
}

/// The name of an event's table in the Parquet export (a directory): `system__event`, as
/// perf names its Python handlers (a `:` in a path is a URI scheme to Hadoop and Spark).
pub fn table_name(ev: &TracepointEvent) -> String {
    let name = ev.name.replace(':', "__");
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    name.chars()
        .map(|c| if safe(c) { c } else { '_' })
        .collect()
}

/// The sample's own columns, before the format's fields.
const SAMPLE_COLUMNS: [(&str, DataType); 6] = [
    ("common_time", DataType::UInt64),
    ("common_cpu", DataType::UInt32),
    ("common_tgid", DataType::Int32),
    ("common_tid", DataType::Int32),
    ("common_comm", DataType::Utf8),
    ("common_period", DataType::UInt64),
];

/// The columns of an event's table: the sample's own (`common_time` in nanoseconds,
/// `common_cpu`, the sample's `common_tgid` and `common_tid`, the thread's name then,
/// `common_period`), `common_stack_id` when its samples carry a call chain (the
/// `stacks` table's id), then every field of the format in its order. A field is null
/// where the payload is too short for it.
pub fn tracepoint_schema(ev: &TracepointEvent) -> Schema {
    let mut fields: Vec<ArrowField> = SAMPLE_COLUMNS
        .iter()
        .map(|(n, t)| ArrowField::new(*n, t.clone(), *n != "common_comm" && *n != "common_period"))
        .collect();
    if ev.callchain {
        fields.push(ArrowField::new("common_stack_id", DataType::UInt64, false));
    }
    for f in ev.format.fields.iter().filter(|f| has_column(ev, f)) {
        fields.push(ArrowField::new(&f.name, field_type(f), true));
    }
    Schema::new(fields)
}

/// Whether a format field has a column: not when it is named like a sample column (no
/// kernel format has such a field; the schema's names must be distinct), nor when it
/// repeats an earlier field's name.
fn has_column(ev: &TracepointEvent, f: &Field) -> bool {
    let sample = SAMPLE_COLUMNS.iter().any(|(n, _)| *n == f.name)
        || (ev.callchain && f.name == "common_stack_id");
    let first = ev.format.fields.iter().position(|g| g.name == f.name);
    !sample && first.is_some_and(|i| std::ptr::eq(&ev.format.fields[i], f))
}

/// One field's column being built: integers as their bits (the format's width, sign
/// extended where signed), narrowed to the column's type when a batch is taken.
enum Col {
    Int(DataType, Vec<u64>, Vec<bool>),
    Text(StringBuilder),
    /// A list column: its element type, offsets, elements' bits, validity.
    List(DataType, Vec<i32>, Vec<u64>, Vec<bool>),
    Bytes(BinaryBuilder),
}

impl Col {
    fn new(t: &DataType) -> Col {
        match t {
            DataType::Utf8 => Col::Text(StringBuilder::new()),
            DataType::Binary => Col::Bytes(BinaryBuilder::new()),
            DataType::List(item) => Col::List(item.data_type().clone(), vec![0], vec![], vec![]),
            t => Col::Int(t.clone(), vec![], vec![]),
        }
    }

    /// Appends field `f`'s value in `raw` ([`field_bytes`]: a text or an array is copied
    /// straight into the column, no `String` or `Vec` made of it). `false`: the field
    /// lies outside the payload (a null).
    fn append_field(&mut self, raw: &[u8], f: &Field, e: Endianness) -> bool {
        let Some(v) = field_bytes(raw, f, e) else {
            self.append_null();
            return false;
        };
        match (self, v) {
            (c, FieldBytes::Text(b)) => c.append_text(b),
            (Col::Int(_, xs, ok), FieldBytes::Int(v)) => {
                xs.push(v);
                ok.push(true);
            }
            (
                Col::List(_, offsets, xs, ok),
                FieldBytes::Ints {
                    bytes,
                    each,
                    signed,
                },
            ) => {
                xs.extend(int_elements(bytes, each, signed, e));
                offsets.push(xs.len() as i32);
                ok.push(true);
            }
            (c, FieldBytes::Bytes(b)) => c.append_bytes(b, e),
            (c, _) => c.append_null(),
        }
        true
    }

    /// A C string (up to its first NUL; invalid UTF-8 replaced, as [`field_value`] does).
    fn append_text(&mut self, b: &[u8]) {
        match self {
            Col::Text(t) => {
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                t.append_value(String::from_utf8_lossy(&b[..end]));
            }
            c => c.append_null(),
        }
    }

    /// Bytes: a binary value, or (a `__data_loc` array of integers) a list's elements.
    fn append_bytes(&mut self, bytes: &[u8], e: Endianness) {
        match self {
            Col::List(item, offsets, xs, ok) => {
                let each = item.primitive_width().unwrap_or(8);
                xs.extend(int_elements(bytes, each, item.is_signed_integer(), e));
                offsets.push(xs.len() as i32);
                ok.push(true);
            }
            Col::Bytes(b) => b.append_value(bytes),
            c => c.append_null(),
        }
    }

    fn append_null(&mut self) {
        match self {
            Col::Int(_, xs, ok) => {
                xs.push(0);
                ok.push(false);
            }
            Col::Text(b) => b.append_null(),
            Col::List(_, offsets, xs, ok) => {
                offsets.push(xs.len() as i32);
                ok.push(false);
            }
            Col::Bytes(b) => b.append_null(),
        }
    }

    /// The column built so far, emptied.
    fn finish(&mut self) -> Result<ArrayRef, Error> {
        Ok(match self {
            Col::Int(t, xs, ok) => {
                let a = narrow(t, xs, validity(ok));
                xs.clear();
                ok.clear();
                a
            }
            Col::Text(b) => ArrayBuilder::finish(b),
            Col::List(item, offsets, xs, ok) => {
                let values = narrow(item, xs, None);
                let bounds = OffsetBuffer::new(ScalarBuffer::from(offsets.as_slice().to_vec()));
                let field = Arc::new(ArrowField::new("item", item.clone(), true));
                let a = ListArray::try_new(field, bounds, values, validity(ok))?;
                xs.clear();
                ok.clear();
                offsets.truncate(1);
                Arc::new(a)
            }
            Col::Bytes(b) => ArrayBuilder::finish(b),
        })
    }
}

/// The validity of a column's values: none when all are valid (the same values, and the
/// writers skip the null checks).
fn validity(ok: &[bool]) -> Option<NullBuffer> {
    if ok.iter().all(|&v| v) {
        None
    } else {
        Some(NullBuffer::from(ok))
    }
}

/// Integers' bits as an array of type `t`.
fn narrow(t: &DataType, xs: &[u64], nulls: Option<NullBuffer>) -> ArrayRef {
    macro_rules! array {
        ($a:ty, $n:ty) => {
            Arc::new(<$a>::new(
                xs.iter().map(|&x| x as $n).collect::<ScalarBuffer<$n>>(),
                nulls,
            ))
        };
    }
    match t {
        DataType::Int8 => array!(Int8Array, i8),
        DataType::Int16 => array!(Int16Array, i16),
        DataType::Int32 => array!(Int32Array, i32),
        DataType::Int64 => array!(Int64Array, i64),
        DataType::UInt8 => array!(UInt8Array, u8),
        DataType::UInt16 => array!(UInt16Array, u16),
        DataType::UInt32 => array!(UInt32Array, u32),
        _ => array!(UInt64Array, u64),
    }
}

/// One tracepoint event's table being built.
pub struct TracepointTable {
    ev: TracepointEvent,
    schema: SchemaRef,
    time: Vec<u64>,
    time_ok: Vec<bool>,
    cpu: Vec<u64>,
    cpu_ok: Vec<bool>,
    tgid: Vec<u64>,
    tid: Vec<u64>,
    comm: StringBuilder,
    period: Vec<u64>,
    stack: Vec<u64>,
    /// The format's fields that have a column built, and their columns.
    fields: Vec<(usize, Col)>,
    /// Which of the schema's sample columns are built ([`SAMPLE_COLUMNS`], then
    /// `common_stack_id`).
    keep: [bool; SAMPLE_COLUMNS.len() + 1],
    rows: usize,
    /// Samples whose payload was shorter than a field (the field is null), and the first
    /// such field.
    short: (u64, Option<String>),
}

impl TracepointTable {
    /// An empty table of `ev`'s samples.
    pub fn new(ev: TracepointEvent) -> Self {
        let schema = Arc::new(tracepoint_schema(&ev));
        let fields = (ev.format.fields.iter().enumerate())
            .filter(|(_, f)| has_column(&ev, f))
            .map(|(i, f)| (i, Col::new(&field_type(f))))
            .collect();
        TracepointTable {
            ev,
            schema,
            time: vec![],
            time_ok: vec![],
            cpu: vec![],
            cpu_ok: vec![],
            tgid: vec![],
            tid: vec![],
            comm: StringBuilder::new(),
            period: vec![],
            stack: vec![],
            fields,
            keep: [true; SAMPLE_COLUMNS.len() + 1],
            rows: 0,
            short: (0, None),
        }
    }

    /// The table of only these columns of its schema (indices in
    /// [`tracepoint_schema`], ascending, each once), in that order.
    pub fn with_columns(mut self, built: &[usize]) -> Self {
        let n = SAMPLE_COLUMNS.len();
        let stack = usize::from(self.ev.callchain);
        for (i, k) in self.keep.iter_mut().enumerate() {
            *k = i < n + stack && built.contains(&i);
        }
        // The fields' columns follow the sample's own in the schema.
        let mut at = n + stack;
        self.fields.retain(|_| {
            at += 1;
            built.contains(&(at - 1))
        });
        let schema = Schema::new(
            built
                .iter()
                .filter_map(|&i| self.schema.fields().get(i).cloned())
                .collect::<Vec<_>>(),
        );
        self.schema = Arc::new(schema);
        self
    }

    /// Whether the table has a `common_comm` column (the caller looks the name up).
    pub fn builds_comm(&self) -> bool {
        self.keep[4]
    }

    /// Whether the table has a `common_stack_id` column (the caller numbers the stack).
    pub fn builds_stack(&self) -> bool {
        self.ev.callchain && self.keep[SAMPLE_COLUMNS.len()]
    }

    /// The event it is the table of.
    pub fn event(&self) -> &TracepointEvent {
        &self.ev
    }

    /// Its columns.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Rows built and not taken yet.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Samples whose payload was shorter than their format says, and the first field
    /// that lay outside it: `(0, None)` when none.
    pub fn short_payloads(&self) -> (u64, Option<&str>) {
        (self.short.0, self.short.1.as_deref())
    }

    /// Adds a sample of the event: its thread's name then, its stack's id (when the
    /// table has the column) and its RAW payload.
    pub fn add(
        &mut self,
        s: &SampleInfo<'_>,
        comm: &str,
        stack_id: u64,
        raw: &[u8],
        e: Endianness,
    ) {
        let k = self.keep;
        if k[0] {
            self.time.push(s.time.unwrap_or(0));
            self.time_ok.push(s.time.is_some());
        }
        if k[1] {
            self.cpu.push(u64::from(s.cpu.unwrap_or(0)));
            self.cpu_ok.push(s.cpu.is_some());
        }
        if k[2] {
            self.tgid.push(s.pid as u32 as u64);
        }
        if k[3] {
            self.tid.push(s.tid as u32 as u64);
        }
        if k[4] {
            self.comm.append_value(comm);
        }
        if k[5] {
            self.period.push(s.period);
        }
        if self.builds_stack() {
            self.stack.push(stack_id);
        }
        let mut short = false;
        for (i, col) in &mut self.fields {
            let f = &self.ev.format.fields[*i];
            if !col.append_field(raw, f, e) && !short {
                short = true;
                self.short.1.get_or_insert_with(|| f.name.clone());
            }
        }
        self.short.0 += u64::from(short);
        self.rows += 1;
    }

    /// The rows built so far as a batch (`None` when there are fewer than `min_rows`,
    /// or none), the table emptied.
    pub fn take(&mut self, min_rows: usize) -> Result<Option<RecordBatch>, Error> {
        if self.rows == 0 || self.rows < min_rows {
            return Ok(None);
        }
        let rows = self.rows;
        // The buffers are emptied, not dropped: the next batch fills them without
        // growing them again.
        let k = self.keep;
        let mut cols: Vec<ArrayRef> = vec![];
        if k[0] {
            cols.push(narrow(
                &DataType::UInt64,
                &self.time,
                validity(&self.time_ok),
            ));
        }
        if k[1] {
            cols.push(narrow(&DataType::UInt32, &self.cpu, validity(&self.cpu_ok)));
        }
        if k[2] {
            cols.push(narrow(&DataType::Int32, &self.tgid, None));
        }
        if k[3] {
            cols.push(narrow(&DataType::Int32, &self.tid, None));
        }
        if k[4] {
            cols.push(ArrayBuilder::finish(&mut self.comm));
        }
        if k[5] {
            cols.push(narrow(&DataType::UInt64, &self.period, None));
        }
        if self.builds_stack() {
            cols.push(narrow(&DataType::UInt64, &self.stack, None));
        }
        for v in [
            &mut self.time,
            &mut self.cpu,
            &mut self.tgid,
            &mut self.tid,
            &mut self.period,
            &mut self.stack,
        ] {
            v.clear();
        }
        self.time_ok.clear();
        self.cpu_ok.clear();
        for (_, c) in &mut self.fields {
            cols.push(c.finish()?);
        }
        self.rows = 0;
        // A batch of no column says its rows in the options.
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(Some(RecordBatch::try_new_with_options(
            self.schema.clone(),
            cols,
            &opts,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfdata::tracepoint::{field_value, parse_format, FieldValue};

    const FORMAT: &str = "name: every_kind\nID: 7\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:char comm[8];\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:s8 small;\toffset:16;\tsize:1;\tsigned:1;\n\
\tfield:short half;\toffset:18;\tsize:2;\tsigned:1;\n\
\tfield:long state;\toffset:24;\tsize:8;\tsigned:1;\n\
\tfield:void * ptr;\toffset:32;\tsize:8;\tsigned:1;\n\
\tfield:int pair[2];\toffset:40;\tsize:8;\tsigned:1;\n\
\tfield:u8 odd[3];\toffset:48;\tsize:3;\tsigned:0;\n\
\tfield:char three[3];\toffset:51;\tsize:3;\tsigned:0;\n\
\tfield:__data_loc char[] name;\toffset:56;\tsize:4;\tsigned:0;\n\
\tfield:__data_loc s16[] nums;\toffset:60;\tsize:4;\tsigned:1;\n\
\tfield:__rel_loc char[] rel;\toffset:64;\tsize:4;\tsigned:0;\n\n\
print fmt: \"x\"\n";

    /// The column as the values [`field_value`] gives (how the table was built before
    /// [`Col::append_field`] read the payload itself).
    fn reference(col: &mut Col, v: Option<FieldValue<'_>>, e: Endianness) {
        use FieldValue as V;
        match (col, v) {
            (Col::Int(_, xs, ok), Some(V::Signed(x))) => {
                xs.push(x as u64);
                ok.push(true);
            }
            (Col::Int(_, xs, ok), Some(V::Unsigned(x))) => {
                xs.push(x);
                ok.push(true);
            }
            (Col::Text(b), Some(V::Text(t))) => b.append_value(t),
            (Col::List(_, offsets, xs, ok), Some(V::SignedArray(v))) => {
                xs.extend(v.iter().map(|&x| x as u64));
                offsets.push(xs.len() as i32);
                ok.push(true);
            }
            (Col::List(_, offsets, xs, ok), Some(V::UnsignedArray(v))) => {
                xs.extend(v);
                offsets.push(xs.len() as i32);
                ok.push(true);
            }
            (c @ (Col::List(..) | Col::Bytes(_)), Some(V::Bytes(bytes))) => {
                c.append_bytes(bytes, e)
            }
            (c, _) => c.append_null(),
        }
    }

    #[test]
    fn fields_read_as_field_value_reads_them() {
        let format = parse_format(FORMAT).expect("format");
        let mut raw = [0u8; 96];
        raw[0..2].copy_from_slice(&7u16.to_le_bytes());
        raw[4..8].copy_from_slice(&(-3i32).to_le_bytes());
        raw[8..13].copy_from_slice(b"perf\0");
        raw[16] = 0xfe;
        raw[18..20].copy_from_slice(&(-2i16).to_le_bytes());
        raw[24..32].copy_from_slice(&(-9i64).to_le_bytes());
        raw[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        raw[40..44].copy_from_slice(&(-1i32).to_le_bytes());
        raw[44..48].copy_from_slice(&5i32.to_le_bytes());
        raw[48..51].copy_from_slice(&[1, 2, 3]);
        raw[51..54].copy_from_slice(&[0xff, b'a', 0]);
        raw[56..60].copy_from_slice(&(72u32 | 4 << 16).to_le_bytes());
        raw[60..64].copy_from_slice(&(76u32 | 6 << 16).to_le_bytes());
        raw[64..68].copy_from_slice(&(14u32 | 3 << 16).to_le_bytes());
        raw[72..76].copy_from_slice(b"ab\xc3\0");
        for (i, v) in [-1i16, 300, -300].iter().enumerate() {
            raw[76 + 2 * i..78 + 2 * i].copy_from_slice(&v.to_le_bytes());
        }
        raw[82..85].copy_from_slice(b"xy\0");
        // Every cut of the payload: fields past its end are null, both ways.
        let payloads: Vec<&[u8]> = (0..=raw.len()).map(|n| &raw[..n]).collect();
        let e = Endianness::Little;
        for f in &format.fields {
            let t = field_type(f);
            let (mut ours, mut theirs) = (Col::new(&t), Col::new(&t));
            for p in &payloads {
                let inside = ours.append_field(p, f, e);
                let v = field_value(p, f, e);
                assert_eq!(inside, v.is_some(), "{}: {} bytes", f.name, p.len());
                reference(&mut theirs, v, e);
            }
            let (a, b) = (ours.finish().unwrap(), theirs.finish().unwrap());
            assert_eq!(a.to_data(), b.to_data(), "field {}", f.name);
            assert!(a.null_count() < a.len(), "field {}: some values", f.name);
        }
    }
}
