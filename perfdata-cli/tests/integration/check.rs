//! `perfdata check` and `perfdata::check`: every conformance fixture is clean (exit 0);
//! damaged files made here list each problem with where it is (exit 1); an input that
//! cannot be opened is unreadable (exit 2).

use crate::common;
use common::{fixture, fixture_path};

use perfdata::check::{check_bytes, ProblemKind, Status};
use perfdata::types::RecordType;
use perfdata::write::{Builder, RecordData, WriteOptions};
use perfdata::PerfData;
use std::io::Cursor;
use std::path::Path;
use std::process::Command;

fn fixtures() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(common::fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .collect();
    v.sort();
    assert!(v.len() > 20);
    v
}

fn run(path: &Path, json: bool) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perfdata"));
    cmd.arg("check").arg(path);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn every_fixture_is_clean() {
    for f in fixtures() {
        let (code, out) = run(&f, false);
        assert_eq!(code, Some(0), "{}: {out}", f.display());
        assert!(out.contains(": clean;"), "{out}");
        if f.is_file() {
            let report = check_bytes(&std::fs::read(&f).unwrap());
            assert_eq!(
                report.status(),
                Status::Clean,
                "{}: {report:?}",
                f.display()
            );
            assert!(report.records > 0);
        }
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn written(file: &Builder<'_>) -> Vec<u8> {
    let mut c = Cursor::new(vec![]);
    file.write_to(&mut c, WriteOptions::default()).unwrap();
    c.into_inner()
}

/// Damaged inputs, each with the one kind of problem it must report.
fn damaged() -> Vec<(&'static str, Vec<u8>, ProblemKind)> {
    let mut out = vec![];
    let good = fixture("callchain.data");
    let data = PerfData::open(&good).unwrap();
    let table = (u64_at(&good, 40) + u64_at(&good, 48)) as usize;

    // A feature section that points past the end.
    let mut b = good.clone();
    let cpudesc = data.features.iter().position(|f| f.id.0 == 8).unwrap();
    put_u64(&mut b, table + 16 * cpudesc, 1 << 40);
    out.push(("damaged feature", b, ProblemKind::DamagedFeature));

    // Two feature sections overlapping by a byte (CPUDESC one byte longer).
    let mut b = good.clone();
    let at = table + 16 * cpudesc + 8;
    put_u64(&mut b, at, u64_at(&good, at) + 1);
    out.push(("overlapping sections", b, ProblemKind::SectionLayout));

    // Bytes after the last feature.
    let mut b = good.clone();
    b.extend_from_slice(b"appended text\n");
    out.push(("trailing bytes", b, ProblemKind::TrailingBytes));

    // A record type the spec does not know.
    let mut file = Builder::read(&data).unwrap();
    let comm = file
        .records
        .iter()
        .position(|r| r.ty == RecordType::COMM)
        .unwrap();
    file.records[comm].ty = RecordType(200);
    out.push((
        "unknown type",
        written(&file),
        ProblemKind::UnknownRecordType,
    ));

    // A record body that does not decode (a MMAP2 cut to its first bytes).
    let mut file = Builder::read(&data).unwrap();
    let mmap = file
        .records
        .iter()
        .position(|r| r.ty == RecordType::MMAP2)
        .unwrap();
    if let RecordData::Raw { body, .. } = &mut file.records[mmap].data {
        *body = body.as_slice()[..12].to_vec().into();
    }
    out.push(("damaged record", written(&file), ProblemKind::DamagedRecord));

    // The last record runs past the data section.
    let mut b = good.clone();
    put_u64(&mut b, 48, u64_at(&good, 48) - 4);
    out.push(("record past the data", b, ProblemKind::RecordOutsideData));

    // Two attrs, one without ids.
    let multi = fixture("multi-event.data");
    let mdata = PerfData::open(&multi).unwrap();
    assert!(mdata.session.attrs.len() > 1);
    let mut file = Builder::read(&mdata).unwrap();
    file.attrs[1].ids.clear();
    out.push((
        "attr without ids",
        written(&file),
        ProblemKind::AttrWithoutIds,
    ));

    // A record with an early time moved after the second FINISHED_ROUND.
    let tp = fixture("tracepoint.data");
    let tdata = PerfData::open(&tp).unwrap();
    let mut file = Builder::read(&tdata).unwrap();
    let rounds: Vec<usize> = (0..file.records.len())
        .filter(|&i| file.records[i].ty == RecordType::FINISHED_ROUND)
        .collect();
    assert!(rounds.len() >= 2, "tracepoint.data: rounds {rounds:?}");
    let first_sample = file
        .records
        .iter()
        .position(|r| r.ty == RecordType::SAMPLE)
        .unwrap();
    assert!(first_sample < rounds[0]);
    let early = file.records.remove(first_sample);
    file.records.push(early);
    out.push(("unsorted round", written(&file), ProblemKind::UnsortedRound));

    // A zero-size record in a pipe stream.
    let mut pipe = fixture("pipe-callchain.pipe.data");
    let pdata = PerfData::open(&pipe).unwrap();
    let mut offsets = vec![];
    pdata
        .for_each_record(&mut |_, r, _| {
            offsets.push(r.offset as usize);
            Ok(true)
        })
        .unwrap();
    let at = offsets[20];
    pipe[at + 6..at + 8].copy_from_slice(&[0, 0]);
    out.push(("zero-size record", pipe, ProblemKind::DamagedRecord));
    out
}

#[test]
fn each_damage_is_listed_with_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    for (what, bytes, kind) in damaged() {
        let report = check_bytes(&bytes);
        assert_eq!(report.status(), Status::Damaged, "{what}: {report:#?}");
        assert!(
            report.problems.iter().any(|p| p.kind == kind),
            "{what}: no {kind:?} in {report:#?}"
        );
        for p in report.problems.iter().filter(|p| p.kind == kind) {
            assert!(
                p.offset.is_some() || kind == ProblemKind::AttrWithoutIds,
                "{what}: {p:?}"
            );
            assert!(
                !p.place.is_empty() && !p.message.is_empty(),
                "{what}: {p:?}"
            );
        }
        assert!(report.records > 10, "{what}: records not read");

        let path = dir.path().join("damaged.data");
        std::fs::write(&path, &bytes).unwrap();
        let (code, text) = run(&path, false);
        assert_eq!(code, Some(1), "{what}: {text}");
        assert!(text.contains("damaged but readable"), "{what}: {text}");
        let (code, json) = run(&path, true);
        assert_eq!(code, Some(1), "{what}");
        let lines: Vec<serde_json::Value> = json
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let summary = lines.last().unwrap();
        assert_eq!(summary["status"], "damaged", "{what}");
        assert_eq!(summary["problems"], lines.len() - 1, "{what}");
        let kind_name = serde_json::to_value(kind).unwrap();
        assert!(
            lines.iter().any(|l| l["problem"]["kind"] == kind_name),
            "{what}: {json}"
        );
    }
}

#[test]
fn the_specific_findings_say_what_was_expected() {
    let found = |what: &str| {
        let (_, bytes, kind) = damaged().into_iter().find(|d| d.0 == what).unwrap();
        let report = check_bytes(&bytes);
        report
            .problems
            .into_iter()
            .find(|p| p.kind == kind)
            .unwrap()
    };
    let f = found("damaged feature");
    assert_eq!(f.place, "feature 8 CPUDESC");
    assert!(f.expected.is_some() && f.found.is_some(), "{f:?}");
    let z = found("zero-size record");
    // The header is there: the type is named (`?` only when the header is cut).
    assert_eq!(z.place, "record #20 ID_INDEX");
    assert_eq!(
        z.expected.as_deref(),
        Some("a record size of at least 8 (perf_event_header.size)")
    );
    assert_eq!(z.found.as_deref(), Some("0"));
    let u = found("unknown type");
    assert!(u.message.contains("type 200"), "{u:?}");
    let r = found("unsorted round");
    assert!(r.message.contains("out of order"), "{r:?}");
    let d = found("damaged record");
    assert!(d.place.ends_with("MMAP2") && !d.field.is_empty(), "{d:?}");
}

#[test]
fn an_input_that_does_not_open_is_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixture("callchain.data");
    for (what, bytes) in [
        ("not perf.data", b"hello, world".to_vec()),
        ("cut in the header", good[..50].to_vec()),
        ("cut in the attrs", good[..200].to_vec()),
    ] {
        assert_eq!(check_bytes(&bytes).status(), Status::Unreadable, "{what}");
        let path = dir.path().join("x.data");
        std::fs::write(&path, &bytes).unwrap();
        let (code, text) = run(&path, false);
        assert_eq!(code, Some(2), "{what}: {text}");
        assert!(text.contains("unreadable"), "{what}: {text}");
    }
    let (code, _) = run(&dir.path().join("missing.data"), false);
    assert_eq!(code, Some(2));
    // A directory recording is checked with its streams.
    let (code, text) = run(&fixture_path("threads.data"), false);
    assert_eq!(code, Some(0), "{text}");
}
