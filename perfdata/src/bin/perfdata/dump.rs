//! `perfdata dump`: every part of a file, as text or one JSON object per line.

use perfdata::container::{Origin, Place, RawRecord, RecordCtx};
use perfdata::generated::perf_data::{EventHeader, RecordBody, RecordType};
use std::io::Write;
use std::path::Path;

/// What `dump` is asked for besides the file.
pub struct DumpOptions {
    pub header_only: bool,
    pub limit: Option<u64>,
    pub json: bool,
    /// Go on past damaged records (see `PerfData::for_each_record_salvaging`).
    pub salvage: bool,
}

/// Prints everything readable. Damage that does not stop the reading (a damaged feature;
/// with `salvage`, damaged records) is printed where it is, as a line of its own and on
/// stderr with the path, and the dump goes on; it then ends with an error, so the exit
/// status is 1 whenever something was not printed.
pub fn dump(path: &Path, opts: &DumpOptions) -> Result<(), String> {
    let DumpOptions {
        header_only,
        limit,
        json,
        salvage,
    } = *opts;
    if path == Path::new("-") {
        if salvage {
            return Err(
                "--salvage needs a file: it searches forward for the next record, which a pipe cannot do in bounded memory (save the stream to a file first)"
                    .into(),
            );
        }
        return dump_stream(std::io::stdin().lock(), limit, json);
    }
    let recording = crate::open_recording(path)?;
    let data = recording
        .data()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut line = |value: serde_json::Value, text: String| {
        let s = if json { value.to_string() } else { text };
        writeln!(out, "{s}").map_err(|e| e.to_string())
    };
    let f = data.format;
    line(
        serde_json::json!({"format": f}),
        format!(
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
        ),
    )?;
    if let Some(h) = &data.header {
        line(
            serde_json::json!({"header": h}),
            format!("# header: {}", to_json(h)),
        )?;
    }
    for (i, a) in data.session.attrs.iter().enumerate() {
        line(
            serde_json::json!({"attr": i, "ids": a.ids, "value": a.attr}),
            format!("# attr {i}: ids {:?} {}", a.ids, to_json(&a.attr)),
        )?;
    }
    let mut damage = 0usize;
    let mut report = |e: &dyn std::fmt::Display| {
        damage += 1;
        eprintln!("perfdata: {}: {e}", path.display());
    };
    for fs in &data.features {
        let value = match data.feature(fs) {
            Ok(v) => v,
            Err(e) => {
                // Features are metadata: report the damaged one and go on.
                line(
                    serde_json::json!({"feature": fs.id.0, "name": fs.id.name(), "offset": fs.offset, "size": fs.size, "error": e.to_string()}),
                    format!(
                        "# feature {} {}: damaged, skipped: {e}",
                        fs.id.0,
                        fs.id.name().unwrap_or("?")
                    ),
                )?;
                report(&format_args!("{e} (feature skipped)"));
                continue;
            }
        };
        line(
            serde_json::json!({"feature": fs.id.0, "name": fs.id.name(), "value": value}),
            format!(
                "# feature {} {}: {}",
                fs.id.0,
                fs.id.name().unwrap_or("?"),
                to_json(&value)
            ),
        )?;
    }
    if let Some(id) = data.feature_table_cut {
        let e = data.feature_problems().pop().expect("the cut table");
        line(
            serde_json::json!({"feature": id.0, "name": id.name(), "error": e.to_string()}),
            format!("# feature table: cut short from feature {}: {e}", id.0),
        )?;
        report(&format_args!("{e} (this feature and later ones skipped)"));
    }
    let damaged = |n: usize| {
        format!(
            "{}: {n} problem(s) reported above; everything else was printed",
            path.display()
        )
    };
    if header_only {
        return if damage > 0 {
            Err(damaged(damage))
        } else {
            Ok(())
        };
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
        if let Place::Stream(i) = place {
            where_ = format!("{}@{where_}", streams[i]);
        }
        let body = match data.decode(&rec, ctx) {
            Ok(b) => b,
            Err(e) if salvage => {
                // The framing holds: report the record and go on to the next.
                record_damage.push(format!("{where_}: {}", e.with_record(count - 1, ty)));
                return Ok(true);
            }
            Err(e) => return Err(e.with_record(count - 1, ty)),
        };
        if let Err(e) = record_line(&mut out, json, &where_, &rec.header, &body) {
            error = Some(e);
            return Ok(false);
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
        recording.for_each_record(&mut visit)
    };
    if let Some(e) = error {
        return Err(e);
    }
    walk.map_err(|e| format!("{}: {e}", path.display()))?;
    for e in &record_damage {
        report(e);
    }
    if damage > 0 {
        return Err(damaged(damage));
    }
    Ok(())
}

/// Where a record is: its offset, or the compressed record's plus the offset within the
/// decompressed stream.
fn location(origin: Origin, offset: u64) -> String {
    match origin {
        Origin::Stream => format!("{offset:#x}"),
        Origin::Compressed { record_offset } => format!("{record_offset:#x}+z{offset:#x}"),
    }
}

/// One record as a line of text or JSON, serialized straight into `out` (no intermediate
/// JSON tree: the dump of a large file is mostly this).
fn record_line(
    out: &mut impl Write,
    json: bool,
    offset: &str,
    header: &EventHeader,
    body: &RecordBody<'_>,
) -> Result<(), String> {
    let ty = RecordType(header.type_);
    let name = name_of(ty);
    let io = |e: std::io::Error| e.to_string();
    if json {
        // Keys in alphabetical order, as a serde_json object prints them.
        #[derive(serde::Serialize)]
        struct Line<'l, 'b> {
            body: &'l RecordBody<'b>,
            misc: u16,
            name: &'l str,
            offset: &'l str,
            size: u16,
            #[serde(rename = "type")]
            type_: u32,
        }
        let line = Line {
            body,
            misc: header.misc.0,
            name: &name,
            offset,
            size: header.size,
            type_: ty.0,
        };
        serde_json::to_writer(&mut *out, &line).map_err(|e| e.to_string())?;
    } else {
        write!(
            out,
            "{offset} [{:#06x}] {name} misc {:#x}: ",
            header.size, header.misc.0
        )
        .map_err(io)?;
        serde_json::to_writer(&mut *out, body).map_err(|e| e.to_string())?;
    }
    out.write_all(b"\n").map_err(io)
}

fn name_of(ty: RecordType) -> String {
    ty.name()
        .map_or_else(|| format!("UNKNOWN({})", ty.0), str::to_string)
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("<{e}>"))
}

/// A pipe-mode stream from standard input, one record at a time (bounded memory).
fn dump_stream(input: impl std::io::Read, limit: Option<u64>, json: bool) -> Result<(), String> {
    let mut reader =
        perfdata::container::StreamReader::new(input).map_err(|e| format!("<stdin>: {e}"))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut count = 0u64;
    while let Some(rec) = reader.next_record().map_err(|e| format!("<stdin>: {e}"))? {
        if limit.is_some_and(|l| count >= l) {
            break;
        }
        let ty = rec.raw.record_type();
        let body = rec
            .decode()
            .map_err(|e| format!("<stdin>: {}", e.with_record(count, ty)))?;
        let where_ = location(rec.origin, rec.raw.offset);
        record_line(&mut out, json, &where_, &rec.raw.header, &body)?;
        count += 1;
    }
    Ok(())
}
