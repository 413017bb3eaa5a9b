//! JIT code from a jitdump is named by the load in force at each sample's time: code
//! loaded at an address names the samples there from its load on, and a later load at
//! the same address (V8 reuses freed code space) takes over from its own timestamp — not
//! earlier, even across records without a timestamp (FINISHED_ROUND). A recording on the
//! JIT's clock (`-k mono`, the `clock-mono` fixture) with a crafted jitdump.

use perfdata::jitdump::types::{CodeLoad, CodeMove, Record, RecordBody, RecordId, UnwindingInfo};
use perfdata::jitdump::JitDump;
use perfdata::rt::{Bytes, Endianness, Str};
use perfdata::Recording;
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::path::{Path, PathBuf};

/// (time, pid, ip) of every user-mode sample (also used by `annotate_jit`).
pub(crate) fn samples(rec: &Recording) -> Vec<(u64, i32, u64)> {
    let opts = AnalyzerOptions {
        no_symbols: true,
        ..AnalyzerOptions::default()
    };
    let mut a = Analyzer::open(rec, &opts).unwrap();
    let mut out = vec![];
    a.run(
        Default::default(),
        |_, item| -> Result<bool, perfdata_analysis::AnalysisError> {
            if let Some(s) = &item.sample {
                if !s.kernel {
                    out.push((s.time.unwrap(), s.pid, s.ip));
                }
            }
            Ok(true)
        },
    )
    .unwrap();
    out
}

/// The symbol of each user-mode sample, with `jitdumps` given.
fn names(rec: &Recording, jitdumps: &[PathBuf]) -> (Vec<String>, Vec<String>) {
    let opts = AnalyzerOptions {
        jitdumps: jitdumps.to_vec(),
        ..AnalyzerOptions::default()
    };
    let mut a = Analyzer::open(rec, &opts).unwrap();
    let mut out = vec![];
    a.run(
        Default::default(),
        |machine, item| -> Result<bool, perfdata_analysis::AnalysisError> {
            if let Some(s) = &item.sample {
                if !s.kernel {
                    let f = machine.resolve(s.pid, false, s.ip);
                    out.push(
                        f.symbol
                            .map(|sym| machine.dsos.symbol_name(sym).to_string())
                            .unwrap_or_default(),
                    );
                }
            }
            Ok(true)
        },
    )
    .unwrap();
    (out, a.notes().to_vec())
}

fn load(time: u64, pid: i32, start: u64, size: u64, index: u64, name: &str) -> Record<'static> {
    Record {
        id: RecordId::CODE_LOAD,
        timestamp: time,
        body: RecordBody::CodeLoad(CodeLoad {
            pid: pid as u32,
            tid: pid as u32,
            vma: start,
            code_addr: start,
            code_size: size,
            code_index: index,
            name: Str::cstr(name),
            code: Bytes::from(vec![0x90; size as usize]),
        }),
        tail: None,
    }
}

#[test]
fn each_sample_is_named_by_the_load_in_force_at_its_time() {
    let path = perfdata_test_support::fixture_path("clock-mono.data");
    let rec = Recording::open(&path).unwrap();
    let all = samples(&rec);
    // Two samples of one process, at different times and addresses.
    let (first, later) = all
        .iter()
        .enumerate()
        .find_map(|(i, a)| {
            let b = all[i + 1..]
                .iter()
                .find(|b| b.1 == a.1 && b.0 > a.0 && b.2 != a.2)?;
            Some((*a, *b))
        })
        .expect("two user samples of one process");
    let pid = first.1;
    let start = first.2.min(later.2);
    let size = first.2.max(later.2) - start + 1;
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join(format!("jit-{pid}.dump"));
    let dump = JitDump {
        endian: Endianness::Little,
        header: JitDump::header(pid as u32, 62),
        records: vec![
            // At the first sample's time (after the process's own maps).
            load(first.0, pid, start, size, 1, "JS:*old"),
            // The later sample's time: from there on.
            load(later.0, pid, start, size, 2, "JS:*new"),
        ],
    };
    std::fs::write(&file, dump.encode().unwrap()).unwrap();
    let (names, notes) = names(&rec, &[file]);
    assert!(notes.is_empty(), "{notes:?}");
    let at = |s: (u64, i32, u64)| all.iter().position(|x| *x == s).unwrap();
    assert_eq!(names[at(first)], "JS:*old");
    assert_eq!(names[at(later)], "JS:*new");
    // Every sample of the process in the range, by its time.
    for (i, s) in all.iter().enumerate() {
        if s.1 == pid && (start..start + size).contains(&s.2) {
            let want = if s.0 >= later.0 {
                "JS:*new"
            } else if s.0 >= first.0 {
                "JS:*old"
            } else {
                continue;
            };
            assert_eq!(names[i], want, "sample {i} at {}", s.0);
        }
    }
}

#[test]
fn a_recording_off_the_jits_clock_does_not_use_its_jitdump_and_says_why() {
    let path = perfdata_test_support::fixture_path("plain.data");
    let rec = Recording::open(&path).unwrap();
    let all = samples(&rec);
    let (_, pid, ip) = *all.first().expect("a user sample");
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("jit.dump");
    let dump = JitDump {
        endian: Endianness::Little,
        header: JitDump::header(pid as u32, 62),
        records: vec![load(1, pid, ip, 1, 1, "JS:*f")],
    };
    std::fs::write(&file, dump.encode().unwrap()).unwrap();
    let (names, notes) = names(&rec, &[file]);
    assert!(names.iter().all(|n| n != "JS:*f"));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("not used") && notes[0].contains("-k mono"),
        "{notes:?}"
    );
}

/// JIT_CODE_UNWINDING_INFO before a load: `.eh_frame` then `.eh_frame_hdr` (its last
/// `hdr` bytes).
fn tables(time: u64, data: &[u8], hdr: u64) -> Record<'static> {
    Record {
        id: RecordId::CODE_UNWINDING_INFO,
        timestamp: time,
        body: RecordBody::UnwindingInfo(UnwindingInfo {
            eh_frame_hdr_size: hdr,
            mapped_size: data.len() as u64,
            unwinding_data: Bytes::from(data.to_vec()),
        }),
        tail: None,
    }
}

/// An `.eh_frame` (one CIE, one FDE of `size` bytes of code, the terminator) for code
/// `eh_frame_at` bytes before it, its pointers pc-relative; and an `.eh_frame_hdr`.
fn eh_frame(size: u32, eh_frame_at: u32) -> (Vec<u8>, Vec<u8>) {
    let mut e = vec![];
    // CIE: length 20, id 0, version 1, "zR", code align 1, data align -8, ra r16,
    // pointers pcrel|sdata4, cfa rsp+8, ra at cfa-8, two nops.
    e.extend([
        20, 0, 0, 0, 0, 0, 0, 0, 1, b'z', b'R', 0, 1, 0x78, 0x10, 1, 0x1b,
    ]);
    e.extend([0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0]);
    // FDE at 24: length 20, back to the CIE, pc_begin (from its own field at 32), range.
    e.extend(20u32.to_le_bytes());
    e.extend(28u32.to_le_bytes());
    e.extend((-(eh_frame_at as i32) - 32).to_le_bytes());
    e.extend(size.to_le_bytes());
    e.extend([0, 0, 0, 0, 0, 0, 0, 0]);
    e.extend([0, 0, 0, 0]);
    let len = e.len() as i32;
    let mut h = vec![1, 0x1b, 0x03, 0x3b];
    h.extend((-len - 4).to_le_bytes());
    h.extend(1u32.to_le_bytes());
    h.extend((-(eh_frame_at as i32) - len).to_le_bytes());
    h.extend((24 - len).to_le_bytes());
    (e, h)
}

#[test]
fn unwinding_tables_go_to_the_next_load_alone_and_move_with_their_code() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("jit-7.dump");
    // 29 bytes of code: `.eh_frame` at 32.
    let (eh, hdr) = eh_frame(29, 32);
    let both = [eh.as_slice(), &hdr].concat();
    // Laid out right after the code (at 29): its FDE misses the code's start.
    let (off_eh, off_hdr) = eh_frame(29, 29);
    let misplaced = [off_eh.as_slice(), &off_hdr].concat();
    let dump = JitDump {
        endian: Endianness::Little,
        header: JitDump::header(7, 62),
        records: vec![
            tables(1, &both, hdr.len() as u64),
            load(2, 7, 0x1000, 29, 1, "with"),
            // V8's "no tables": a header alone.
            tables(3, &hdr, hdr.len() as u64),
            load(4, 7, 0x2000, 16, 2, "header-only"),
            // A header said longer than the whole: not used, said.
            tables(5, &both, 1000),
            load(6, 7, 0x3000, 29, 3, "bad"),
            // No tables before it: the ones before the earlier load do not carry over.
            load(7, 7, 0x4000, 29, 4, "none"),
            tables(8, &misplaced, off_hdr.len() as u64),
            load(9, 7, 0x6000, 29, 5, "misplaced"),
            Record {
                id: RecordId::CODE_MOVE,
                timestamp: 10,
                body: RecordBody::CodeMove(CodeMove {
                    pid: 7,
                    tid: 7,
                    vma: 0x5000,
                    old_code_addr: 0x1000,
                    new_code_addr: 0x5000,
                    code_size: 29,
                    code_index: 1,
                }),
                tail: None,
            },
        ],
    };
    std::fs::write(&file, dump.encode().unwrap()).unwrap();
    let mut jit =
        perfdata_analysis::symbols::jit::JitDumps::new(&[file], Path::new("perf.data"), true);
    jit.reset();
    let loads = jit.take_all();
    let by_name = |n: &str, at: u64| {
        loads
            .iter()
            .find(|c| c.name == n && c.start == at)
            .unwrap_or_else(|| panic!("{n} at {at:#x}: {loads:#?}"))
    };
    let tables_of = |c: &perfdata_analysis::symbols::jit::JitCode| {
        let u = c.unwinding.as_ref().expect("tables");
        (u.eh_frame.to_vec(), u.eh_frame_hdr.to_vec(), u.is_32)
    };
    let with = tables_of(by_name("with", 0x1000));
    assert_eq!(with.0, eh);
    assert_eq!(with.1, hdr);
    assert!(!with.2, "EM_X86_64: 64-bit");
    assert_eq!(tables_of(by_name("with", 0x5000)), with, "moved along");
    for n in ["header-only", "bad", "none", "misplaced"] {
        let at = loads.iter().find(|c| c.name == n).unwrap().start;
        assert_eq!(by_name(n, at).unwinding, None, "{n}");
    }
    let notes = jit.notes();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].contains("1 code load(s) (the first: misplaced)") && notes[0].contains("not used"),
        "{notes:?}"
    );
    assert!(
        notes[1].contains("1 JIT_CODE_UNWINDING_INFO") && notes[1].contains("not used"),
        "{notes:?}"
    );
}
