//! JIT code annotated from a crafted jitdump (on the `clock-mono` fixture's clock): its
//! instructions get the source lines of the CODE_DEBUG_INFO before their CODE_LOAD (an
//! entry from its address up to the next entry's), in the listing's interleaved source,
//! `-l` and the per-source-line view; the line shares add up to the function's; a file
//! that is absent leaves the line numbers alone.

use super::jit::samples;
use perfdata::jitdump::types::{CodeLoad, DebugEntry, DebugInfo, Record, RecordBody, RecordId};
use perfdata::jitdump::JitDump;
use perfdata::rt::{Bytes, Endianness, Str};
use perfdata::Recording;
use perfdata_analysis::analyses::annotate::{self, listing, AnnotateOptions, Item};
use perfdata_analysis::{Analyzer, AnalyzerOptions};

fn entry(addr: u64, lineno: i32, name: impl AsRef<[u8]>) -> DebugEntry<'static> {
    DebugEntry {
        addr,
        lineno,
        discrim: 0,
        name: Str::cstr(name),
    }
}

const SIZE: u64 = 256;

/// The recording, a jitdump whose code (256 one-byte `nop`s) covers the 256 bytes of
/// one process with the most samples, and the source file its debug info names.
struct Setup {
    dir: tempfile::TempDir,
    dump: std::path::PathBuf,
}

fn setup(debug: impl FnOnce(u64, &str, &str) -> Vec<Record<'static>>) -> Setup {
    let rec = Recording::open(perfdata_test_support::fixture_path("clock-mono.data")).unwrap();
    let all = samples(&rec);
    // The densest window of one process's samples.
    let mut best: Option<(usize, i32, u64, u64)> = None;
    for &(_, pid, ip) in &all {
        let here: Vec<_> = all
            .iter()
            .filter(|s| s.1 == pid && (ip..ip + SIZE).contains(&s.2))
            .collect();
        let distinct: std::collections::BTreeSet<u64> = here.iter().map(|s| s.2).collect();
        let t0 = all
            .iter()
            .filter(|s| s.1 == pid)
            .map(|s| s.0)
            .min()
            .unwrap();
        if distinct.len() >= 2 && best.is_none_or(|b| here.len() > b.0) {
            best = Some((here.len(), pid, ip, t0));
        }
    }
    let (_, pid, start, t0) = best.expect("two user samples of one process 256 bytes apart");
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src/app.js");
    std::fs::create_dir_all(src.parent().unwrap()).unwrap();
    let text: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    std::fs::write(&src, text).unwrap();
    let absent = dir.path().join("gone/lib.js");
    let mut records = debug(start, src.to_str().unwrap(), absent.to_str().unwrap());
    records.push(Record {
        id: RecordId::CODE_LOAD,
        timestamp: t0,
        body: RecordBody::CodeLoad(CodeLoad {
            pid: pid as u32,
            tid: pid as u32,
            vma: start,
            code_addr: start,
            code_size: SIZE,
            code_index: 1,
            name: Str::cstr("JS:*hot"),
            code: Bytes::from(vec![0x90; SIZE as usize]),
        }),
        tail: None,
    });
    let dump = dir.path().join(format!("jit-{pid}.dump"));
    let file = JitDump {
        endian: Endianness::Little,
        header: JitDump::header(pid as u32, 62),
        records,
    };
    std::fs::write(&dump, file.encode().unwrap()).unwrap();
    Setup { dir, dump }
}

fn debug_info(time: u64, code_addr: u64, entries: Vec<DebugEntry<'static>>) -> Record<'static> {
    Record {
        id: RecordId::CODE_DEBUG_INFO,
        timestamp: time,
        body: RecordBody::DebugInfo(DebugInfo { code_addr, entries }),
        tail: None,
    }
}

fn annotated(s: &Setup, source: bool) -> annotate::Annotation {
    let rec = Recording::open(perfdata_test_support::fixture_path("clock-mono.data")).unwrap();
    let opts = AnalyzerOptions {
        jitdumps: vec![s.dump.clone()],
        ..AnalyzerOptions::default()
    };
    let mut a = Analyzer::open(&rec, &opts).unwrap();
    let aopts = AnnotateOptions {
        symbols: vec!["JS:*hot".into()],
        source,
        by_line: true,
        ..AnnotateOptions::default()
    };
    annotate::annotate(&mut a, &aopts).unwrap()
}

#[test]
fn jit_code_gets_the_lines_of_its_code_debug_info() {
    let s = setup(|start, src, absent| {
        vec![
            // An earlier function's lines: the next load's own replace them.
            debug_info(0, start, vec![entry(start, 2, src)]),
            debug_info(
                0,
                start,
                vec![
                    entry(start, 10, src),
                    // The previous entry's name, repeated (the byte 0xff).
                    entry(start + 64, 12, b"\xff"),
                    // V8's "no position": none from here to the next entry.
                    entry(start + 128, -1, src),
                    entry(start + 160, 30, absent),
                    entry(start + 224, 11, src),
                ],
            ),
        ]
    });
    let a = annotated(&s, true);
    let ev = &a.events[0];
    assert!(a.skipped.is_empty(), "{:?}", a.skipped);
    let f = &ev.functions[0];
    let src = s.dir.path().join("src/app.js").display().to_string();
    let absent = s.dir.path().join("gone/lib.js").display().to_string();
    let mut insns = 0;
    for item in &f.items {
        let Item::Insn(i) = item else { continue };
        insns += 1;
        let offset = i.addr - f.start;
        let want = match offset {
            0..64 => Some((src.clone(), 10)),
            64..128 => Some((src.clone(), 12)),
            128..160 => None,
            160..224 => Some((absent.clone(), 30)),
            _ => Some((src.clone(), 11)),
        };
        assert_eq!(i.line, want, "offset {offset}");
    }
    assert_eq!(insns, SIZE);
    // The listing interleaves the file's lines (objdump -S), none of the absent file.
    let sources: Vec<&str> = f
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Source(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert!(sources.contains(&"line 10") && sources.contains(&"line 12"));
    assert!(!sources.iter().any(|t| t.contains("30")), "{sources:?}");
    // Per source line: every line's share, adding up to the function's.
    let total: u64 = f.lines.iter().map(|l| l.period).sum();
    assert_eq!(total, f.period);
    let pct: f64 = f
        .lines
        .iter()
        .map(|l| {
            listing::percent(
                ev,
                f,
                l.samples,
                l.period,
                listing::PercentType::LocalPeriod,
            )
        })
        .sum();
    assert!((pct - 100.0).abs() < 1e-9, "{pct}");
    let global: f64 = f
        .lines
        .iter()
        .map(|l| {
            listing::percent(
                ev,
                f,
                l.samples,
                l.period,
                listing::PercentType::GlobalPeriod,
            )
        })
        .sum();
    let own = listing::percent(
        ev,
        f,
        f.samples,
        f.period,
        listing::PercentType::GlobalPeriod,
    );
    assert!((global - own).abs() < 1e-9, "{global} != {own}");
    let shown: Vec<(Option<u32>, Option<&str>, usize)> = f
        .lines
        .iter()
        .map(|l| {
            (
                l.position.as_ref().map(|p| p.1),
                l.text.as_deref(),
                l.runs.iter().map(|r| r.instructions).sum(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (Some(10), Some("line 10"), 64),
            (Some(11), Some("line 11"), 32),
            (Some(12), Some("line 12"), 64),
            (Some(30), None, 64),
            (None, None, 32),
        ]
    );
    // The text view, the temporary directory named as such.
    let mut out = vec![];
    listing::write_by_line(&mut out, ev, f, &listing::ListingOptions::default()).unwrap();
    let text = String::from_utf8(out)
        .unwrap()
        .replace(&s.dir.path().display().to_string(), "TMP");
    insta::assert_snapshot!(text);
    // -l: the lines' files and numbers.
    let opts = listing::ListingOptions {
        print_line: true,
        ..Default::default()
    };
    for (path, _) in listing::line_summary(ev, f, &opts) {
        assert!(
            ["app.js:10", "app.js:11", "app.js:12", "lib.js:30", "??:0"].contains(&path.as_str()),
            "{path}"
        );
    }
}

#[test]
fn jit_code_without_debug_info_has_no_lines() {
    let s = setup(|_, _, _| vec![]);
    let a = annotated(&s, true);
    let f = &a.events[0].functions[0];
    assert!(f.items.iter().all(|i| match i {
        Item::Insn(i) => i.line.is_none(),
        Item::Source(_) | Item::Line { .. } => false,
        Item::Function(_) => true,
    }));
    assert_eq!(f.lines.len(), 1);
    assert_eq!(f.lines[0].position, None);
    assert_eq!(f.lines[0].period, f.period);
}
