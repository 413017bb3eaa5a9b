//! `perfdata`: inspect perf.data files.
//!
//! `perfdata dump FILE` prints the format, the attrs, every feature and every record,
//! decoded by the code generated from the spec (one JSON object per line with `--json`).

use clap::{Parser, Subcommand};
use perfdata::container::{Origin, PerfData};
use perfdata::generated::perf_data::{RecordBody, RecordType};
use perfdata::rt::{BigEndian, Endianness, LittleEndian, Reader};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "perfdata",
    version,
    about = "Read perf.data files (every variant)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the header, attrs, features and records of a perf.data file.
    Dump {
        /// A perf.data file (file or pipe layout, either byte order).
        file: PathBuf,
        /// Print only the header, attrs and features.
        #[arg(long)]
        header_only: bool,
        /// Stop after this many records.
        #[arg(long)]
        limit: Option<u64>,
        /// One JSON object per line instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dump {
            file,
            header_only,
            limit,
            json,
        } => dump(&file, header_only, limit, json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfdata: {e}");
            ExitCode::FAILURE
        }
    }
}

fn dump(path: &PathBuf, header_only: bool, limit: Option<u64>, json: bool) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: the map is read-only and private; perf.data files are not modified while read
    // (a concurrent writer could only make us see inconsistent bytes, which every decoder
    // treats as untrusted input anyway).
    let map =
        unsafe { memmap2::Mmap::map(&file) }.map_err(|e| format!("{}: {e}", path.display()))?;
    let data = PerfData::open(&map).map_err(|e| format!("{}: {e}", path.display()))?;
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
    for fs in &data.features {
        let value = data.feature(fs).map_err(|e| e.to_string())?;
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
    if header_only {
        return Ok(());
    }
    let mut count = 0u64;
    let endian = data.format.endian;
    let mut error = None;
    let walk = data.for_each_record(&mut |origin, rec, ctx| {
        if limit.is_some_and(|l| count >= l) {
            return Ok(false);
        }
        count += 1;
        let ty = rec.record_type();
        let base = rec.offset + 8;
        let body = match endian {
            Endianness::Little => RecordBody::decode(ty, &mut Reader::<LittleEndian>::new(rec.body, base), ctx),
            Endianness::Big => RecordBody::decode(ty, &mut Reader::<BigEndian>::new(rec.body, base), ctx),
        };
        let body = match body {
            Ok(b) => b,
            Err(e) => return Err(e.with_record(count - 1, ty)),
        };
        let where_ = match origin {
            Origin::Stream => format!("{:#x}", rec.offset),
            Origin::Compressed { record_offset } => {
                format!("{record_offset:#x}+z{:#x}", rec.offset)
            }
        };
        let name = name_of(ty);
        if let Err(e) = line(
            serde_json::json!({"offset": where_, "type": ty.0, "name": name, "misc": rec.header.misc.0, "size": rec.header.size, "body": body}),
            format!(
                "{where_} [{:#06x}] {name} misc {:#x}: {}",
                rec.header.size,
                rec.header.misc.0,
                to_json(&body)
            ),
        ) {
            error = Some(e);
            return Ok(false);
        }
        Ok(true)
    });
    if let Some(e) = error {
        return Err(e);
    }
    walk.map_err(|e| format!("{}: {e}", path.display()))
}

fn name_of(ty: RecordType) -> String {
    ty.name()
        .map_or_else(|| format!("UNKNOWN({})", ty.0), str::to_string)
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("<{e}>"))
}
