//! A jitdump file as text or one JSON object per line (`perfdata dump jit-PID.dump`).

use super::types::RecordBody;
use super::JitDump;
use crate::dump::{Damaged, DumpOptions};
use crate::rt::{Endianness, Error};
use std::io::Write;

/// Prints the header and the records (as far as `opts.limit`; none with
/// `opts.header_only`). Code bytes are printed (hex) only with `opts.payloads`, else their
/// size. A file cut short is printed up to the cut, which is reported in the result.
pub fn dump_jitdump(
    bytes: &[u8],
    opts: &DumpOptions,
    mut out: impl Write,
) -> Result<Damaged, Error> {
    let (dump, cut) = JitDump::parse_partial(bytes)?;
    let mut line = |value: serde_json::Value, text: String| -> Result<(), Error> {
        if opts.json {
            writeln!(out, "{value}")?;
        } else {
            writeln!(out, "{text}")?;
        }
        Ok(())
    };
    let order = match dump.endian {
        Endianness::Little => "little-endian",
        Endianness::Big => "big-endian",
    };
    line(
        serde_json::json!({"format": "jitdump", "endian": dump.endian}),
        format!("# format: jitdump, {order}"),
    )?;
    let h = &dump.header;
    line(
        serde_json::json!({"header": h}),
        format!(
            "# header: version {}, elf_mach {}, pid {}, timestamp {}, flags {:#x}; {} records",
            h.version,
            h.elf_mach,
            h.pid,
            h.timestamp,
            h.flags.0,
            dump.records.len()
        ),
    )?;
    let limit = if opts.header_only {
        Some(0)
    } else {
        opts.limit
    };
    for (i, r) in dump.records.iter().enumerate() {
        if limit.is_some_and(|n| i as u64 >= n) {
            break;
        }
        let mut value = serde_json::to_value(r).map_err(|e| Error::other(e.to_string()))?;
        let what = match &r.body {
            RecordBody::CodeLoad(c) => {
                if !opts.payloads {
                    value["body"]["CodeLoad"]["code"] = serde_json::json!(c.code.len());
                }
                format!(
                    "{}/{} {:#x} size {} index {} {}",
                    c.pid,
                    c.tid,
                    c.code_addr,
                    c.code_size,
                    c.code_index,
                    c.name.to_str_lossy()
                )
            }
            RecordBody::CodeMove(m) => format!(
                "{}/{} {:#x} -> {:#x} size {} index {}",
                m.pid, m.tid, m.old_code_addr, m.new_code_addr, m.code_size, m.code_index
            ),
            RecordBody::DebugInfo(d) => {
                let mut s = format!("{:#x}, {} entries", d.code_addr, d.entries.len());
                for e in &d.entries {
                    s.push_str(&format!(
                        "\n    {:#x} {}:{} discrim {}",
                        e.addr,
                        e.name.to_str_lossy(),
                        e.lineno,
                        e.discrim
                    ));
                }
                s
            }
            RecordBody::UnwindingInfo(u) => format!(
                "{} bytes of tables ({} of .eh_frame_hdr), {} mapped",
                u.unwinding_data.len(),
                u.eh_frame_hdr_size,
                u.mapped_size
            ),
            RecordBody::Close(_) => String::new(),
            RecordBody::Unknown(b) => format!("{} bytes", b.len()),
        };
        let kind =
            r.id.name()
                .map_or_else(|| r.id.0.to_string(), str::to_string);
        let mut text = format!("{i} {} {kind}", r.timestamp);
        if !what.is_empty() {
            text.push(' ');
            text.push_str(&what);
        }
        if opts.payloads {
            if let RecordBody::CodeLoad(c) = &r.body {
                let hex: String = c
                    .code
                    .as_slice()
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                text.push_str(&format!("\n    code {hex}"));
            }
        }
        value["record"] = serde_json::json!(i);
        line(value, text)?;
    }
    out.flush()?;
    Ok(Damaged {
        problems: cut.map(|e| e.to_string()).into_iter().collect(),
    })
}
