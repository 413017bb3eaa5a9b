//! The text perf script prints after a side-band record's common columns: perf's
//! `perf_event__fprintf` (`PERF_RECORD_COMM exec: sleep:2257/2257`, `PERF_RECORD_MMAP2
//! …`), one record per call.

use perfdata::types::{RecordBody, RecordMisc};
use std::io::{self, Write};

/// perf's name of a record type (`perf_event__name`).
pub fn record_name(ty: u32) -> &'static str {
    match ty {
        1 => "MMAP",
        2 => "LOST",
        3 => "COMM",
        4 => "EXIT",
        5 => "THROTTLE",
        6 => "UNTHROTTLE",
        7 => "FORK",
        8 => "READ",
        9 => "SAMPLE",
        10 => "MMAP2",
        11 => "AUX",
        12 => "ITRACE_START",
        13 => "LOST_SAMPLES",
        14 => "SWITCH",
        15 => "SWITCH_CPU_WIDE",
        16 => "NAMESPACES",
        17 => "KSYMBOL",
        18 => "BPF_EVENT",
        19 => "CGROUP",
        20 => "TEXT_POKE",
        21 => "AUX_OUTPUT_HW_ID",
        64 => "ATTR",
        65 => "EVENT_TYPE",
        66 => "TRACING_DATA",
        67 => "BUILD_ID",
        68 => "FINISHED_ROUND",
        69 => "ID_INDEX",
        70 => "AUXTRACE_INFO",
        71 => "AUXTRACE",
        72 => "AUXTRACE_ERROR",
        73 => "THREAD_MAP",
        74 => "CPU_MAP",
        75 => "STAT_CONFIG",
        76 => "STAT",
        77 => "STAT_ROUND",
        78 => "EVENT_UPDATE",
        79 => "TIME_CONV",
        80 => "HEADER_FEATURE",
        81 => "COMPRESSED",
        82 => "FINISHED_INIT",
        _ => "UNKNOWN",
    }
}

const MISC_COMM_EXEC: u16 = 1 << 13;
const MISC_SWITCH_OUT: u16 = 1 << 13;
const MISC_SWITCH_OUT_PREEMPT: u16 = 1 << 14;
const MISC_MMAP_DATA: u16 = 1 << 13;
const NAMESPACE_NAMES: [&str; 7] = ["net", "uts", "ipc", "pid", "user", "mnt", "cgroup"];

/// Writes `PERF_RECORD_<NAME>` and the record's own text, ending the line; a TEXT_POKE's
/// address is named by `poked` (its kernel symbol and offset, when known).
pub fn write_record(
    out: &mut impl Write,
    ty: u32,
    misc: RecordMisc,
    body: &RecordBody<'_>,
    poked: Option<&str>,
) -> io::Result<()> {
    write!(out, "PERF_RECORD_{}", record_name(ty))?;
    let misc = misc.0;
    match body {
        RecordBody::Comm(c) => writeln!(
            out,
            "{}: {}:{}/{}",
            if misc & MISC_COMM_EXEC != 0 {
                " exec"
            } else {
                ""
            },
            String::from_utf8_lossy(c.comm.text()),
            c.pid as i32,
            c.tid as i32
        ),
        RecordBody::Fork(f) => writeln!(
            out,
            "({}:{}):({}:{})",
            f.pid as i32, f.tid as i32, f.ppid as i32, f.ptid as i32
        ),
        RecordBody::Exit(f) => writeln!(
            out,
            "({}:{}):({}:{})",
            f.pid as i32, f.tid as i32, f.ppid as i32, f.ptid as i32
        ),
        RecordBody::Mmap(m) => writeln!(
            out,
            " {}/{}: [{}({}) @ {}]: {} {}",
            m.pid as i32,
            m.tid as i32,
            hex(m.addr),
            hex(m.len),
            hex(m.pgoff),
            if misc & MISC_MMAP_DATA != 0 { 'r' } else { 'x' },
            String::from_utf8_lossy(m.filename.text())
        ),
        RecordBody::Mmap2(m) => {
            write!(
                out,
                " {}/{}: [{}({}) @ {}",
                m.pid as i32,
                m.tid as i32,
                hex(m.addr),
                hex(m.len),
                hex(m.pgoff)
            )?;
            match &m.file_id {
                perfdata::types::Mmap2FileId::BuildId(b) => {
                    let len = usize::from(b.build_id_size).min(b.build_id.len());
                    write!(out, " <")?;
                    for byte in &b.build_id[..len] {
                        write!(out, "{byte:02x}")?;
                    }
                    write!(out, ">]")?;
                }
                perfdata::types::Mmap2FileId::Inode(i) => {
                    write!(
                        out,
                        " {:02x}:{:02x} {} {}]",
                        i.maj, i.min, i.ino, i.ino_generation
                    )?;
                }
            }
            let prot = m.prot;
            writeln!(
                out,
                ": {}{}{}{} {}",
                if prot & 1 != 0 { 'r' } else { '-' },
                if prot & 2 != 0 { 'w' } else { '-' },
                if prot & 4 != 0 { 'x' } else { '-' },
                if m.map_flags & 1 != 0 { 's' } else { 'p' },
                String::from_utf8_lossy(m.filename.text())
            )
        }
        RecordBody::Switch(_) => writeln!(out, " {}", switch_dir(misc)),
        RecordBody::SwitchCpuWide(s) => writeln!(
            out,
            " {}  {} pid/tid: {:5}/{:<5}",
            switch_dir(misc),
            if misc & MISC_SWITCH_OUT != 0 {
                "next"
            } else {
                "prev"
            },
            s.next_prev_pid as i32,
            s.next_prev_tid as i32
        ),
        RecordBody::Lost(l) => writeln!(out, " lost {}", l.lost),
        RecordBody::Namespaces(n) => {
            let links = &n.link_info;
            write!(
                out,
                " {}/{} - nr_namespaces: {}\n\t\t[",
                n.pid as i32,
                n.tid as i32,
                links.len()
            )?;
            for (i, l) in links.iter().enumerate() {
                if i > 0 && i % 4 == 0 {
                    write!(out, "\n\t\t ")?;
                }
                write!(
                    out,
                    "{}/{}: {}/{}{}",
                    i,
                    NAMESPACE_NAMES.get(i).copied().unwrap_or("UNKNOWN"),
                    l.dev,
                    hex(l.ino),
                    if i + 1 != links.len() { ", " } else { "]\n" }
                )?;
            }
            Ok(())
        }
        RecordBody::Cgroup(c) => writeln!(
            out,
            " cgroup: {} {}",
            c.id,
            String::from_utf8_lossy(c.path.text())
        ),
        RecordBody::Ksymbol(k) => writeln!(
            out,
            " addr {:x} len {} type {} flags 0x{:x} name {}",
            k.addr,
            k.len,
            k.ksym_type,
            k.ksym_flags.0,
            String::from_utf8_lossy(k.name.text())
        ),
        RecordBody::BpfEvent(b) => {
            writeln!(out, " type {}, flags {}, id {}", b.type_, b.bpf_flags, b.id)
        }
        RecordBody::ItraceStart(i) => writeln!(out, " pid: {} tid: {}", i.pid, i.tid),
        RecordBody::TextPoke(t) => {
            let (old, new) = (t.old_bytes.as_slice(), t.new_bytes.as_slice());
            writeln!(
                out,
                " {:x} {} old len {} new len {}",
                t.addr,
                poked.unwrap_or(""),
                old.len(),
                new.len()
            )?;
            // perf's `binary__fprintf`, 16 bytes a line.
            for (what, bytes) in [("Old", old), ("New", new)] {
                for chunk in bytes.chunks(16) {
                    write!(out, "            {what} bytes:")?;
                    for b in chunk {
                        write!(out, " {b:02x}")?;
                    }
                    writeln!(out)?;
                }
            }
            Ok(())
        }
        _ => writeln!(out),
    }
}

/// `%#x` as C prints it: `0` for zero, `0x…` otherwise (Rust's `{:#x}` prints `0x0`).
fn hex(v: u64) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

fn switch_dir(misc: u16) -> &'static str {
    if misc & MISC_SWITCH_OUT == 0 {
        "IN         "
    } else if misc & MISC_SWITCH_OUT_PREEMPT == 0 {
        "OUT        "
    } else {
        "OUT preempt"
    }
}

/// The process and thread a task or map record is about.
pub fn own_thread(body: &RecordBody<'_>) -> (i32, i32) {
    match body {
        RecordBody::Mmap(r) => (r.pid as i32, r.tid as i32),
        RecordBody::Mmap2(r) => (r.pid as i32, r.tid as i32),
        RecordBody::Comm(r) => (r.pid as i32, r.tid as i32),
        RecordBody::Fork(r) => (r.pid as i32, r.tid as i32),
        RecordBody::Exit(r) => (r.pid as i32, r.tid as i32),
        RecordBody::Namespaces(r) => (r.pid as i32, r.tid as i32),
        _ => (-1, -1),
    }
}
