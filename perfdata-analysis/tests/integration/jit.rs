//! JIT code from a jitdump is named by the load in force at each sample's time: code
//! loaded at an address names the samples there from its load on, and a later load at
//! the same address (V8 reuses freed code space) takes over from its own timestamp — not
//! earlier, even across records without a timestamp (FINISHED_ROUND). A recording on the
//! JIT's clock (`-k mono`, the `clock-mono` fixture) with a crafted jitdump.

use perfdata::jitdump::types::{CodeLoad, Record, RecordBody, RecordId};
use perfdata::jitdump::JitDump;
use perfdata::rt::{Bytes, Endianness, Str};
use perfdata::Recording;
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::path::{Path, PathBuf};

/// (time, pid, ip) of every user-mode sample.
fn samples(rec: &Recording) -> Vec<(u64, i32, u64)> {
    let opts = AnalyzerOptions {
        no_symbols: true,
        ..AnalyzerOptions::default()
    };
    let mut a = Analyzer::open(rec, &opts).unwrap();
    let mut out = vec![];
    a.run(&mut |_, item| {
        if let Some(s) = &item.sample {
            if !s.kernel {
                out.push((s.time.unwrap(), s.pid, s.ip));
            }
        }
        Ok(true)
    })
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
    a.run(&mut |machine, item| {
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
    })
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
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/fixtures/clock-mono.data");
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
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/fixtures/plain.data");
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
