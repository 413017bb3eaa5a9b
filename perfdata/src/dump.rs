//! Printing a recording: every part of it, as text or one JSON object per line (what
//! `perfdata dump` prints; a program can call [`dump_recording`] or [`dump_pipe`] with
//! any `Write`).
//!
//! Text and JSON are two renderings of the same values: a text line is a short prefix
//! (`# attr 0 cpu-clock:`, `0x470 [0x50] SAMPLE cpu-clock misc 0x2:`) and the value in
//! the JSON the `--json` line carries. The values are the generated types serialized by
//! serde, so the spec's field names and display attributes (`@hex`, `@signed`) decide
//! what they look like. The JSON lines are described in `docs/dump-json.md`
//! ([`SCHEMA_VERSION`]).

use crate::container::{
    detect, Format, Layout, Origin, PipeReader, Place, RawRecord, RecordCtx, Recording,
};
use crate::events::{default_event_name, described_events, event_names};
use crate::generated::perf_data::{
    Attr, EventHeader, FeatureBody, FeatureId, RecordBody, RecordMisc, RecordType,
};
use crate::rt::{Bytes, Endianness, Error, Serialize};
use crate::tracepoint::{Field, FieldValue, Formats};
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// A JSON error while writing a line: the output's I/O error.
fn json(e: serde_json::Error) -> Error {
    Error::from(std::io::Error::from(e))
}

/// Version of the JSON line shapes (`docs/dump-json.md`); the first line names it.
pub const SCHEMA_VERSION: u32 = 2;

/// What to print besides the recording.
#[derive(Debug, Clone, Copy, Default)]
pub struct DumpOptions {
    /// Only the header, attrs and features (of a file-layout recording: a pipe's come as
    /// records).
    pub header_only: bool,
    /// Stop after this many records.
    pub limit: Option<u64>,
    /// One JSON object per line instead of text.
    pub json: bool,
    /// Go on past damaged records (see [`crate::Records::salvaging`]); a recording on
    /// disk only (a pipe cannot be searched forward in bounded memory).
    pub salvage: bool,
    /// Print COMPRESSED records' zstd data instead of its size.
    pub payloads: bool,
}

/// The damage a dump printed around: each problem is also a line of the output, where
/// it is. Empty when everything was printed.
#[derive(Debug, Default)]
pub struct Damaged {
    /// Each problem as one line (error, then what was skipped).
    pub problems: Vec<String>,
}

/// Prints everything readable of `recording` to `out`. Damage that does not stop the
/// reading (a damaged feature; with `salvage`, damaged records) is printed where it is,
/// as a line of its own, and collected in the returned [`Damaged`]; the dump goes on.
pub fn dump_recording(
    recording: &Recording,
    opts: &DumpOptions,
    out: impl Write,
) -> Result<Damaged, Error> {
    let DumpOptions {
        header_only,
        limit,
        json,
        salvage,
        payloads,
    } = *opts;
    let data = recording.data()?;
    let mut p = Printer::new(out, json, payloads);
    p.endian = data.format.endian;
    p.format(&data.format)?;
    if let Some(h) = &data.header {
        p.line(&Keyed("header", h), "# header: ", h)?;
    }
    let pipe = data.format.layout == Layout::Pipe;
    p.names = event_names(&data);
    if !pipe {
        // A pipe recording's attrs are printed where their HEADER_ATTR records are, as
        // `dump -` does.
        for (i, a) in data.session.attrs.iter().enumerate() {
            p.attr(i, &a.ids, &a.attr)?;
        }
    }
    let mut damaged = Damaged::default();
    for fs in &data.features {
        match data.feature(fs) {
            Ok(v) => p.feature(fs.id, &v)?,
            Err(e) => {
                // Features are metadata: report the damaged one and go on.
                let e = e.to_string();
                let line = FeatureError {
                    feature: &feature_name(fs.id),
                    id: fs.id.0,
                    offset: Some(fs.offset),
                    size: Some(fs.size),
                    error: &e,
                };
                let text = format!(
                    "# feature {} {}: damaged, skipped: {e}",
                    fs.id.0,
                    feature_name(fs.id)
                );
                p.raw_line(&line, &text)?;
                damaged.problems.push(format!("{e} (feature skipped)"));
            }
        }
    }
    if let Some(id) = data.feature_table_cut {
        let e = data
            .feature_problems()
            .pop()
            .expect("the cut table")
            .to_string();
        let line = FeatureError {
            feature: &feature_name(id),
            id: id.0,
            offset: None,
            size: None,
            error: &e,
        };
        let text = format!("# feature table: cut short from feature {}: {e}", id.0);
        p.raw_line(&line, &text)?;
        damaged
            .problems
            .push(format!("{e} (this feature and later ones skipped)"));
    }
    if header_only {
        p.out.flush()?;
        return Ok(damaged);
    }
    let mut count = 0u64;
    let mut error = None;
    let streams: Vec<String> = recording
        .stream_paths()
        .map(|p| p.display().to_string())
        .collect();
    let mut record_damage = vec![];
    let mut visit = |place: Place, origin: Origin, rec: RawRecord<'_>, ctx: &RecordCtx| {
        if limit.is_some_and(|l| count >= l) {
            return Ok(false);
        }
        count += 1;
        let ty = rec.record_type();
        let mut where_ = location(origin, rec.offset);
        if let Place::DataFile(i) = place {
            where_ = format!("{}@{where_}", streams[i]);
        }
        let body = match data.decode(&rec, ctx) {
            Ok(b) => b,
            Err(e) if salvage => {
                // The framing holds: report the record and go on to the next.
                record_damage.push(format!(
                    "{where_}: {}",
                    e.with_record(count - 1, ty.label())
                ));
                return Ok(true);
            }
            Err(e) => return Err(e.with_record(count - 1, ty.label())),
        };
        let attr = ctx.attr.map(|a| a as usize);
        let inside = matches!(origin, Origin::Compressed { .. });
        p.tracing_data(&rec);
        if let Err(e) = p.record(&where_, inside, &rec, &body, attr) {
            error = Some(e);
            return Ok(false);
        }
        if pipe {
            if let Err(e) = p.header_record(&body) {
                error = Some(e);
                return Ok(false);
            }
        }
        Ok(true)
    };
    let walk = if salvage {
        recording
            .for_each_record_salvaging(&mut visit)
            .map(|errors| {
                for e in errors {
                    record_damage.push(e.to_string());
                }
            })
    } else {
        // A run of SPLIT records that made no record is left out: a problem, not the end.
        recording
            .for_each_record_noting(&mut visit)
            .map(|unjoined| {
                for e in unjoined {
                    record_damage.push(format!(
                        "{e}: the record these SPLIT records held is left out"
                    ));
                }
            })
    };
    if let Some(e) = error {
        return Err(e);
    }
    walk?;
    p.summary()?;
    damaged.problems.extend(record_damage);
    Ok(damaged)
}

/// Where a record is: its offset, the compressed record's plus the offset within the
/// decompressed stream, or the first SPLIT record's of the run that made it.
fn location(origin: Origin, offset: u64) -> String {
    match origin {
        Origin::Input => format!("{offset:#x}"),
        Origin::Compressed { record_offset } => format!("{record_offset:#x}+z{offset:#x}"),
        Origin::Joined { record_offset } => format!("{record_offset:#x}+split"),
    }
}

/// A feature's name, or its number when the spec does not name it.
fn feature_name(id: FeatureId) -> String {
    id.name()
        .map_or_else(|| format!("FEATURE_{}", id.0), str::to_string)
}

/// `{"KEY": value}`.
struct Keyed<'v, T>(&'static str, &'v T);
impl<T: Serialize> Serialize for Keyed<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(self.0, self.1)?;
        m.end()
    }
}

#[derive(serde::Serialize)]
struct FeatureError<'l> {
    feature: &'l str,
    id: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    error: &'l str,
}

/// Event ids as `"0x…"` strings (the attr section's `ids`, `@hex` in the spec).
struct Ids<'v>(&'v [u64]);
impl Serialize for Ids<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        crate::rt::ser_hex(&self.0.to_vec(), s)
    }
}

/// Prints lines and counts records by type.
struct Printer<W: Write> {
    out: W,
    json: bool,
    payloads: bool,
    /// Event names by attr index.
    names: Vec<String>,
    /// Records by type, for the summary.
    counts: [u64; 256],
    other_counts: BTreeMap<u32, u64>,
    /// Records read from inside COMPRESSED records.
    in_compressed: u64,
    /// The last COMPRESSED record printed (its location) and the records read from its
    /// data so far: its `compressed_end` line follows them.
    chunk: Option<(&'static str, String, u64)>,
    /// Attrs printed so far (pipe mode prints them as they arrive), with their ids.
    attr_ids: Vec<Vec<u64>>,
    /// The event formats of the tracing data, once it has been read: SAMPLE `raw` data
    /// is then printed by field.
    tracepoints: Option<Formats>,
    /// The stream's byte order (a pipe's HEADER_TRACING_DATA record is decoded in it).
    endian: Endianness,
    /// A tracepoint sample's line, before its `raw` value is replaced.
    scratch: Vec<u8>,
}

impl<W: Write> Printer<W> {
    fn new(out: W, json: bool, payloads: bool) -> Self {
        Printer {
            out,
            json,
            payloads,
            names: vec![],
            counts: [0; 256],
            other_counts: BTreeMap::new(),
            in_compressed: 0,
            chunk: None,
            attr_ids: vec![],
            tracepoints: None,
            endian: Endianness::Little,
            scratch: vec![],
        }
    }

    /// One line: the JSON `line`, or `prefix` and the JSON of `value`.
    fn line(
        &mut self,
        line: &impl Serialize,
        prefix: &str,
        value: &impl Serialize,
    ) -> Result<(), Error> {
        if self.json {
            serde_json::to_writer(&mut self.out, line).map_err(json)?;
        } else {
            self.out.write_all(prefix.as_bytes())?;
            serde_json::to_writer(&mut self.out, value).map_err(json)?;
        }
        self.out.write_all(b"\n")?;
        Ok(())
    }

    /// A line that is the JSON `line` or the whole `text`.
    fn raw_line(&mut self, line: &impl Serialize, text: &str) -> Result<(), Error> {
        if self.json {
            serde_json::to_writer(&mut self.out, line).map_err(json)?;
        } else {
            self.out.write_all(text.as_bytes())?;
        }
        self.out.write_all(b"\n")?;
        Ok(())
    }

    fn format(&mut self, f: &Format) -> Result<(), Error> {
        #[derive(serde::Serialize)]
        struct Line<'l> {
            perfdata_dump: u32,
            format: &'l Format,
        }
        let text = format!(
            "# format: {:?} {:?}-endian{}{}",
            f.layout,
            f.endian,
            if f.legacy_v1 {
                ", legacy PERFFILE v1"
            } else {
                ""
            },
            if f.short_header {
                ", 72-byte header (no features)"
            } else {
                ""
            }
        );
        self.raw_line(
            &Line {
                perfdata_dump: SCHEMA_VERSION,
                format: f,
            },
            &text,
        )
    }

    fn attr(&mut self, index: usize, ids: &[u64], attr: &Attr<'_>) -> Result<(), Error> {
        #[derive(serde::Serialize)]
        struct Line<'l, 'a> {
            attr: usize,
            event: &'l str,
            ids: Ids<'l>,
            value: &'l Attr<'a>,
        }
        let event = self.names.get(index).map_or("", String::as_str).to_string();
        let mut prefix = format!("# attr {index} {event}: ids [");
        for (i, id) in ids.iter().enumerate() {
            if i > 0 {
                prefix.push_str(", ");
            }
            prefix.push_str(&format!("{id:#x}"));
        }
        prefix.push_str("] ");
        let line = Line {
            attr: index,
            event: &event,
            ids: Ids(ids),
            value: attr,
        };
        self.line(&line, &prefix, attr)?;
        if self.attr_ids.len() <= index {
            self.attr_ids.resize(index + 1, vec![]);
        }
        self.attr_ids[index] = ids.to_vec();
        Ok(())
    }

    fn feature(&mut self, id: FeatureId, value: &FeatureBody<'_>) -> Result<(), Error> {
        if let FeatureBody::TracingData(t) = value {
            self.tracepoints = Some(Formats::new(t));
        }
        let name = feature_name(id);
        let key = name.to_ascii_lowercase();
        struct Line<'l, 'a> {
            name: &'l str,
            id: u32,
            key: &'l str,
            value: &'l FeatureBody<'a>,
        }
        impl Serialize for Line<'_, '_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("feature", self.name)?;
                m.serialize_entry("id", &self.id)?;
                m.serialize_entry(self.key, self.value)?;
                m.end()
            }
        }
        let prefix = format!("# feature {} {name}: ", id.0);
        let line = Line {
            name: &name,
            id: id.0,
            key: &key,
            value,
        };
        self.line(&line, &prefix, value)
    }

    /// A pipe's HEADER_TRACING_DATA record: its event formats name the fields of the
    /// tracepoint samples after it.
    #[inline]
    fn tracing_data(&mut self, rec: &RawRecord<'_>) {
        if rec.record_type() != RecordType::HEADER_TRACING_DATA {
            return;
        }
        if let Some(f) = Formats::of_record(rec, self.endian) {
            self.tracepoints = Some(f);
        }
    }

    /// The attr and feature lines of a pipe recording's HEADER_ATTR and HEADER_FEATURE
    /// records (the same lines a file's attrs section and feature sections give).
    fn header_record(&mut self, body: &RecordBody<'_>) -> Result<(), Error> {
        match body {
            RecordBody::HeaderAttr(a) => {
                let index = self.attr_ids.len();
                if self.names.len() <= index {
                    let name = default_event_name(a.attr.type_, a.attr.config);
                    self.names.push(name);
                }
                let ids: Vec<u64> = a.ids.iter().collect();
                self.attr(index, &ids, &a.attr)?;
            }
            RecordBody::HeaderFeature(f) => {
                if let Some(data) = &f.data {
                    let id = FeatureId(u32::try_from(f.feat_id).unwrap_or(u32::MAX));
                    if let FeatureBody::EventDesc(d) = data.as_ref() {
                        // Name the events from here on (a stream names them after the attrs).
                        let attr_ids = &self.attr_ids;
                        let described = described_events(d, |id| {
                            attr_ids.iter().position(|ids| ids.contains(&id))
                        });
                        for (at, name) in described.collect::<Vec<_>>() {
                            if let Some(slot) = self.names.get_mut(at) {
                                *slot = name;
                            }
                        }
                    }
                    self.feature(id, data)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// One record as a line of text or JSON, serialized straight into `out` (no
    /// intermediate JSON tree: the dump of a large file is mostly this).
    fn record(
        &mut self,
        offset: &str,
        in_compressed: bool,
        rec: &RawRecord<'_>,
        body: &RecordBody<'_>,
        attr: Option<usize>,
    ) -> Result<(), Error> {
        let header = &rec.header;
        // A simpleperf record's size is 32 bits; `header.size` holds 16.
        let size = (crate::HEADER_SIZE + rec.body.len()) as u64;
        let ty = RecordType(header.type_);
        self.in_compressed += u64::from(in_compressed);
        // The walk passes a COMPRESSED record, then the records its data completes: the
        // first record that is not from inside one ends the chunk.
        match &mut self.chunk {
            Some((_, _, n)) if in_compressed => *n += 1,
            Some(_) => self.end_chunk()?,
            None => {}
        }
        if ty == RecordType::COMPRESSED {
            self.chunk = Some(("COMPRESSED", offset.to_string(), 0));
        } else if ty == RecordType::COMPRESSED2 {
            self.chunk = Some(("COMPRESSED2", offset.to_string(), 0));
        }
        match self.counts.get_mut(ty.0 as usize) {
            Some(n) => *n += 1,
            None => *self.other_counts.entry(ty.0).or_default() += 1,
        }
        let unknown;
        let name = match ty.name() {
            Some(n) => n,
            None => {
                unknown = format!("UNKNOWN({})", ty.0);
                &unknown
            }
        };
        let event = match body {
            RecordBody::Sample(_) => attr.and_then(|a| self.names.get(a)).map(String::as_str),
            _ => None,
        };
        let value = match body {
            RecordBody::Compressed(c) if !self.payloads => Body::Compressed(CompressedSummary {
                data_size: c.data.len(),
            }),
            RecordBody::Compressed2(c) if !self.payloads => Body::Compressed(CompressedSummary {
                data_size: c.data.len(),
            }),
            _ => Body::Record(body),
        };
        let trace = match (body, &self.tracepoints) {
            (RecordBody::Sample(s), Some(f)) => s.raw.as_ref().and_then(|raw| {
                let data = raw.data.as_slice();
                f.decode(data).map(|(_, fields)| (raw, data, fields))
            }),
            _ => None,
        };
        // A tracepoint sample: the line is written to `scratch` and its `raw` value
        // replaced by the fields (the generated serializer writes the bytes).
        let line = RecordLine {
            json: self.json,
            offset,
            name,
            ty,
            header,
            size,
            event,
            value,
        };
        if trace.is_some() {
            self.scratch.clear();
            line.write(&mut self.scratch)?;
        } else {
            // The common case: straight into the (statically typed) output.
            line.write(&mut self.out)?;
        }
        if let Some((raw, data, fields)) = trace {
            let old = serde_json::to_vec(&Keyed("raw", raw)).map_err(json)?;
            // `{"raw":{...}}` without its outer braces: the key and the value.
            let old = &old[1..old.len() - 1];
            let new = Keyed(
                "raw",
                &TraceRaw {
                    fields: &fields,
                    size: data.len(),
                    data,
                },
            );
            let new = serde_json::to_vec(&new).map_err(json)?;
            let at = self
                .scratch
                .windows(old.len())
                .position(|w| w == old)
                .ok_or_else(|| Error::other("a SAMPLE line without its raw data"))?;
            self.out.write_all(&self.scratch[..at])?;
            self.out.write_all(&new[1..new.len() - 1])?;
            self.out.write_all(&self.scratch[at + old.len()..])?;
        }
        self.out.write_all(b"\n")?;
        Ok(())
    }

    /// After the records a COMPRESSED record's data completed: how many there were.
    fn end_chunk(&mut self) -> Result<(), Error> {
        let Some((name, at, records)) = self.chunk.take() else {
            return Ok(());
        };
        #[derive(serde::Serialize)]
        struct Line<'l> {
            compressed_end: &'l str,
            records: u64,
        }
        let text = format!("# end of {name} {at}: {records} records completed by its data");
        self.raw_line(
            &Line {
                compressed_end: &at,
                records,
            },
            &text,
        )
    }

    /// Records by type, like the end of `perf report -D`.
    fn summary(&mut self) -> Result<(), Error> {
        self.end_chunk()?;
        let mut by_type: Vec<(String, u64)> = vec![];
        for (t, &n) in self.counts.iter().enumerate() {
            if n > 0 {
                by_type.push((RecordType(t as u32).label(), n));
            }
        }
        for (&t, &n) in &self.other_counts {
            by_type.push((RecordType(t).label(), n));
        }
        let total: u64 = by_type.iter().map(|(_, n)| n).sum();
        if self.json {
            #[derive(serde::Serialize)]
            struct Summary<'l> {
                records: u64,
                in_compressed: u64,
                types: BTreeMap<&'l str, u64>,
            }
            let types = by_type.iter().map(|(t, n)| (t.as_str(), *n)).collect();
            let line = Keyed(
                "summary",
                &Summary {
                    records: total,
                    in_compressed: self.in_compressed,
                    types,
                },
            );
            serde_json::to_writer(&mut self.out, &line).map_err(json)?;
            self.out.write_all(b"\n")?;
        } else {
            let mut text = format!("# records: {total}");
            if self.in_compressed > 0 {
                text.push_str(&format!(
                    " ({} of them inside COMPRESSED records)",
                    self.in_compressed
                ));
            }
            text.push('\n');
            for (t, n) in &by_type {
                text.push_str(&format!("#   {t}: {n}\n"));
            }
            self.out.write_all(text.as_bytes())?;
        }
        self.out.flush()?;
        Ok(())
    }
}

/// A COMPRESSED record without its zstd data (the records inside follow it, at `+z`
/// offsets); `--payloads` prints the data.
#[derive(serde::Serialize)]
struct CompressedSummary {
    data_size: usize,
}

/// One record line, ready to write.
struct RecordLine<'l, 'b> {
    json: bool,
    offset: &'l str,
    name: &'l str,
    ty: RecordType,
    header: &'l EventHeader,
    /// Bytes of the record, header included.
    size: u64,
    event: Option<&'l str>,
    value: Body<'l, 'b>,
}

impl RecordLine<'_, '_> {
    /// The line without its newline: JSON, or the text prefix and the value's JSON.
    fn write<W: Write>(&self, out: &mut W) -> Result<(), Error> {
        if self.json {
            #[derive(serde::Serialize)]
            struct Line<'l, 'b> {
                offset: &'l str,
                record: &'l str,
                #[serde(rename = "type")]
                type_: u32,
                size: u64,
                misc: RecordMisc,
                #[serde(skip_serializing_if = "Option::is_none")]
                event: Option<&'l str>,
                body: &'l Body<'l, 'b>,
            }
            let line = Line {
                offset: self.offset,
                record: self.name,
                type_: self.ty.0,
                size: self.size,
                misc: self.header.misc,
                event: self.event,
                body: &self.value,
            };
            serde_json::to_writer(&mut *out, &line).map_err(json)
        } else {
            write!(out, "{} [{:#06x}] {}", self.offset, self.size, self.name)?;
            if let Some(e) = self.event {
                write!(out, " {e}")?;
            }
            write!(out, " misc {:#x}: ", self.header.misc.0)?;
            serde_json::to_writer(&mut *out, &self.value).map_err(json)
        }
    }
}

/// A tracepoint sample's `raw`: its fields by name, in the format file's order (a field
/// that lies outside the data is `null`, and the data is then printed too), and its size.
struct TraceRaw<'l, 'r> {
    fields: &'l [(&'l Field, Option<FieldValue<'r>>)],
    size: usize,
    data: &'r [u8],
}

impl Serialize for TraceRaw<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Fields<'l, 'r>(&'l [(&'l Field, Option<FieldValue<'r>>)]);
        impl Serialize for Fields<'_, '_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map(self.0.iter().map(|(f, v)| (f.name.as_str(), v)))
            }
        }
        let cut = self.fields.iter().any(|(_, v)| v.is_none());
        let mut m = s.serialize_map(Some(2 + usize::from(cut)))?;
        m.serialize_entry("fields", &Fields(self.fields))?;
        m.serialize_entry("size", &self.size)?;
        if cut {
            m.serialize_entry("data", &Bytes::from(self.data))?;
        }
        m.end()
    }
}

/// The value of a record line: the record, or a summary of it.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Body<'l, 'b> {
    Record(&'l RecordBody<'b>),
    Compressed(CompressedSummary),
}

/// Prints a pipe-layout stream read from `input` (standard input), one record at a time:
/// memory stays bounded whatever its length. With `opts.salvage` it goes on past damage
/// as [`dump_recording`] does on the same stream saved to a file, looking ahead at most
/// [`crate::SALVAGE_LOOKAHEAD`] bytes.
pub fn dump_pipe(
    mut input: impl Read,
    opts: &DumpOptions,
    out: impl Write,
) -> Result<Damaged, Error> {
    let mut head = [0u8; 16];
    input
        .read_exact(&mut head)
        .map_err(|e| Error::other(format!("reading the header: {e}")))?;
    let format = detect(&head)?;
    if format.layout != Layout::Pipe {
        return Err(Error::other(
            "a file-layout perf.data, not a pipe-mode stream: its records are found through the header's offsets, which a pipe cannot seek to; dump the file by its path",
        ));
    }
    let mut reader = PipeReader::new(std::io::Cursor::new(head).chain(input))?;
    if opts.salvage {
        reader = reader.salvaging();
    }
    let mut p = Printer::new(out, opts.json, opts.payloads);
    p.endian = format.endian;
    p.format(&format)?;
    let mut count = 0u64;
    let mut damaged = Damaged::default();
    while let Some(rec) = reader.next_record()? {
        if opts.limit.is_some_and(|l| count >= l) {
            break;
        }
        let ty = rec.raw.record_type();
        let where_ = location(rec.origin, rec.raw.offset);
        let body = match rec.decode() {
            Ok(b) => b,
            Err(e) if opts.salvage => {
                // The framing holds: report the record and go on to the next.
                let e = e.with_record(count, ty.label());
                damaged.problems.push(format!("{where_}: {e}"));
                count += 1;
                continue;
            }
            Err(e) => return Err(e.with_record(count, ty.label())),
        };
        let attr = rec.ctx.attr.map(|a| a as usize);
        let inside = matches!(rec.origin, Origin::Compressed { .. });
        p.tracing_data(&rec.raw);
        p.record(&where_, inside, &rec.raw, &body, attr)?;
        p.header_record(&body)?;
        count += 1;
    }
    p.summary()?;
    let damage = reader.take_damage();
    damaged
        .problems
        .extend(damage.iter().map(|d| d.to_string()));
    Ok(damaged)
}

/// Prints a gperftools CPU profile: its layout, header, records (up to `limit`) and map
/// lines. A profile cut short (a killed process) prints the records before the cut; the
/// cut is the returned problem.
#[cfg(feature = "gperftools")]
pub fn dump_gperftools(
    bytes: &[u8],
    limit: Option<u64>,
    json_lines: bool,
    mut out: impl Write,
) -> Result<Damaged, Error> {
    use crate::gperftools::{MapLine, Profile};
    let (profile, cut) = Profile::parse_partial(bytes)?;
    let mut line = |value: serde_json::Value, text: String| -> Result<(), Error> {
        if json_lines {
            writeln!(out, "{value}")?;
        } else {
            writeln!(out, "{text}")?;
        }
        Ok(())
    };
    let l = profile.layout;
    line(
        serde_json::json!({"format": "gperftools", "layout": l}),
        format!("# format: gperftools CPU profile, {}", l.describe()),
    )?;
    let h = &profile.header;
    line(
        serde_json::json!({"header": h}),
        format!(
            "# header: period {} us, {} extra header words; {} records, {} samples",
            h.period_us,
            h.extra.len(),
            profile.records.len(),
            profile.total_samples()
        ),
    )?;
    for (i, r) in profile.records.iter().enumerate() {
        if limit.is_some_and(|n| i as u64 >= n) {
            break;
        }
        let pcs: Vec<String> = r.pcs.iter().map(|p| format!("{p:#x}")).collect();
        line(
            serde_json::json!({"record": i, "count": r.count, "pcs": r.pcs}),
            format!("{i} count {} pcs {}", r.count, pcs.join(" ")),
        )?;
    }
    for m in profile.map_lines() {
        let text = match &m {
            MapLine::Mapping(m) => format!(
                "# map {:#x}-{:#x} {} {:#x} {} {} {}",
                m.start, m.end, m.perms, m.offset, m.dev, m.inode, m.path
            ),
            MapLine::Var { name, value } => format!("# map var {name}={value}"),
            MapLine::Other(s) => format!("# map other {s}"),
        };
        line(serde_json::json!({"map": m}), text)?;
    }
    out.flush()?;
    Ok(Damaged {
        problems: cut.map(|e| e.to_string()).into_iter().collect(),
    })
}
