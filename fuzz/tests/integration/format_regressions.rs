//! Replays the fuzz targets' bodies (`perfdata_fuzz::format`, `unwind`, `viewers`,
//! `analyses`, `disasm`, `python`) on
//! stable: every committed crash or regression input (`fuzz/regressions/<target>/`), and
//! every seed the fuzzer starts from (the conformance fixtures and, when present,
//! `../shared/corpus`).

use crate::common;
use common::corpus_derived;
use common::{corpus_dir, workspace};
use std::path::PathBuf;

fn files_in(dir: &std::path::Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut v: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|e| e != "md"))
        .collect();
    v.sort();
    v
}

fn seeds() -> Vec<PathBuf> {
    let mut v = files_in(&common::fixtures_dir());
    if let Some(c) = corpus_dir() {
        v.extend(files_in(&c));
    }
    v
}

/// Replays the committed findings of `target` through `body` (a finding mutated from a
/// corpus file is kept as a `.recipe`, its edits of that file: the corpus is never copied
/// here; without the corpus it is said and left out); how many were replayed.
fn replay_findings(target: &str, body: impl Fn(&[u8]) + std::panic::RefUnwindSafe) -> usize {
    let dir = workspace().join("fuzz/regressions").join(target);
    let corpus = corpus_dir();
    let mut replayed = 0;
    for f in files_in(&dir) {
        let Some(bytes) = corpus_derived::input(&f, corpus.as_deref()).unwrap() else {
            common::skip(&format!(
                "{}: its corpus file is absent, the finding is not replayed",
                f.display()
            ));
            continue;
        };
        // A panic names the input.
        let caught = std::panic::catch_unwind(|| body(&bytes));
        assert!(caught.is_ok(), "{target}: {} fails", f.display());
        replayed += 1;
    }
    replayed
}

/// The findings of `target`, then every seed, through `body`.
fn replay(target: &str, body: fn(&[u8])) {
    let replayed = replay_findings(target, body);
    for f in seeds() {
        let bytes = std::fs::read(&f).unwrap();
        let caught = std::panic::catch_unwind(|| body(&bytes));
        assert!(caught.is_ok(), "{target}: {} fails", f.display());
    }
    println!("{target}: {replayed} regression input(s) replayed");
}

#[test]
fn read_file() {
    replay("read_file", perfdata_fuzz::format::read_file);
}

#[test]
fn read_stream() {
    replay("read_stream", |b| {
        perfdata_fuzz::format::read_stream(b);
    });
    // Seeds in some chunkings: 1-byte reads, odd sizes, whole.
    for f in seeds() {
        let bytes = std::fs::read(&f).unwrap();
        for sizes in [&[1u8][..], &[3, 250, 7], &[]] {
            let input = [&[sizes.len() as u8], sizes, &bytes].concat();
            perfdata_fuzz::format::read_stream(&input);
        }
    }
}

#[test]
fn reencode() {
    replay("reencode", perfdata_fuzz::format::reencode);
}

#[test]
fn convert() {
    replay("convert", perfdata_fuzz::format::convert);
}

#[test]
fn structured() {
    let replayed = replay_findings("structured", |b| {
        perfdata_fuzz::format::structured(b);
    });
    // Arbitrary models from fixed pseudo-random bytes (the same every run).
    let mut rng = perfdata_test_support::XorShift::new(0x2545_f491_4f6c_dd1d);
    let mut checked = 0;
    for len in (0..200).map(|i| 64 + i * 37) {
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        checked += perfdata_fuzz::format::structured(&bytes);
    }
    // The writer refuses most random models (values that contradict themselves); some
    // must get through, or the target checks nothing.
    assert!(checked > 0, "no arbitrary model was written");
    println!(
        "structured: {replayed} regression input(s) replayed; {checked} outputs of arbitrary models checked"
    );
}

/// The unwinders: the committed inputs, and inputs from a fixed pseudo-random stream (the
/// fuzzer's seeds are `arbitrary` bytes: no file is a meaningful one).
#[test]
fn unwind() {
    let replayed = replay_findings("unwind", perfdata_fuzz::unwind::unwind);
    let mut rng = perfdata_test_support::XorShift::new(0x2545_f491_4f6c_dd1d);
    let mut next = || rng.next_u64();
    for i in 0..2000 {
        let len = (next() % 4096) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let caught = std::panic::catch_unwind(|| perfdata_fuzz::unwind::unwind(&bytes));
        assert!(caught.is_ok(), "unwind: pseudo-random input {i} fails");
    }
    println!("unwind: {replayed} regression input(s) replayed, 2000 pseudo-random inputs");
}

#[test]
fn viewers() {
    replay("viewers", perfdata_fuzz::viewers::viewers);
    // The input file the body wrote (in /dev/shm): not left behind by the test.
    let _ = std::fs::remove_file(perfdata_fuzz::scratch::input_path("viewers"));
}

#[test]
fn analyses() {
    replay("analyses", |b| {
        perfdata_fuzz::analyses::analyses(b);
    });
    // The seeds reach every tool the target runs (a body that printed nothing would
    // check nothing).
    let mut all = perfdata_fuzz::analyses::Printed::default();
    for f in seeds() {
        let p = perfdata_fuzz::analyses::analyses(&std::fs::read(&f).unwrap());
        all.script += p.script;
        all.sched += p.sched;
        all.intervals += p.intervals;
        all.tracepoint_rows += p.tracepoint_rows;
    }
    let _ = std::fs::remove_file(perfdata_fuzz::scratch::input_path("analyses"));
    println!("analyses: the seeds printed {all:?}");
    assert!(
        all.script > 0 && all.sched > 0 && all.intervals > 0 && all.tracepoint_rows > 0,
        "{all:?}"
    );
}

/// The disassemblers: the committed inputs, and code from a fixed pseudo-random stream
/// for each architecture and syntax, at a usual address and at the top of the address
/// space (no recording is code).
#[test]
fn disasm() {
    let replayed = replay_findings("disasm", perfdata_fuzz::disasm::disasm);
    let mut rng = perfdata_test_support::XorShift::new(0x2545_f491_4f6c_dd1d);
    for i in 0..600 {
        let len = (rng.next_u64() % 512) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        if let Some(control) = bytes.first_mut() {
            // Every architecture and syntax in turn; the top of the address space
            // every other time.
            *control = (i % 8) as u8 | if i % 16 < 8 { 8 } else { 0 };
            if i % 16 < 8 && bytes.len() > 8 {
                bytes[1..9].copy_from_slice(&(u64::MAX - (i as u64 % 64)).to_le_bytes());
            }
        }
        let caught = std::panic::catch_unwind(|| perfdata_fuzz::disasm::disasm(&bytes));
        assert!(caught.is_ok(), "disasm: pseudo-random input {i} fails");
    }
    println!("disasm: {replayed} regression input(s) replayed, 600 pseudo-random inputs");
}

#[test]
fn python() {
    replay("python", |b| {
        perfdata_fuzz::python::python(b);
    });
    // Seeds with column selections (in another order, repeated, names among them) and
    // batch sizes: the selection's batches must be the whole table's.
    let mut compared = 0;
    for f in seeds() {
        let bytes = std::fs::read(&f).unwrap();
        for control in [
            &[0u8][..],
            &[(5 << 3) | 3, 8, 20, 0],
            &[(31 << 3) | 7, 20, 20, 1, 2, 3, 4, 19],
        ] {
            compared += perfdata_fuzz::python::python(&[control, &bytes].concat());
        }
    }
    let _ = std::fs::remove_file(perfdata_fuzz::scratch::input_path("python"));
    println!("python: {compared} batches of a selection compared with the whole table's");
    assert!(compared > 0, "no seed had samples to compare");
}

#[test]
fn jitdump() {
    use perfdata::jitdump::types::{
        CodeLoad, CodeMove, DebugEntry, DebugInfo, Record, RecordBody, RecordId, UnwindingInfo,
    };
    use perfdata::jitdump::JitDump;
    use perfdata::rt::{Bytes, Endianness, Str};
    replay("jitdump", perfdata_fuzz::jitdump::jitdump);
    // Files of every record kind in both byte orders, whole and cut at every byte.
    let rec = |id, body| Record {
        id,
        timestamp: 7,
        body,
        tail: None,
    };
    for endian in [Endianness::Little, Endianness::Big] {
        let dump = JitDump {
            endian,
            header: JitDump::header(9, 62),
            records: vec![
                rec(
                    RecordId::CODE_DEBUG_INFO,
                    RecordBody::DebugInfo(DebugInfo {
                        code_addr: 0x40,
                        entries: vec![DebugEntry {
                            addr: 0x40,
                            lineno: 2,
                            discrim: 0,
                            name: Str::cstr("a.js"),
                        }],
                    }),
                ),
                rec(
                    RecordId::CODE_UNWINDING_INFO,
                    RecordBody::UnwindingInfo(UnwindingInfo {
                        eh_frame_hdr_size: 2,
                        mapped_size: 0,
                        unwinding_data: Bytes::from(&b"hdr!"[..]),
                    }),
                ),
                rec(
                    RecordId::CODE_LOAD,
                    RecordBody::CodeLoad(CodeLoad {
                        pid: 9,
                        tid: 9,
                        vma: 0x40,
                        code_addr: 0x40,
                        code_size: 2,
                        code_index: 1,
                        name: Str::cstr("f"),
                        code: Bytes::from(&b"\x90\xc3"[..]),
                    }),
                ),
                rec(
                    RecordId::CODE_MOVE,
                    RecordBody::CodeMove(CodeMove {
                        pid: 9,
                        tid: 9,
                        vma: 0x80,
                        old_code_addr: 0x40,
                        new_code_addr: 0x80,
                        code_size: 2,
                        code_index: 1,
                    }),
                ),
                rec(RecordId(99), RecordBody::Unknown(Bytes::from(&b"?"[..]))),
            ],
        };
        let bytes = dump.encode().unwrap();
        for cut in 0..=bytes.len() {
            perfdata_fuzz::jitdump::jitdump(&bytes[..cut]);
        }
    }
}
