//! Checks 1-3 on the committed fixtures against perf's stored output
//! (`conformance/fixtures/perf-output/`, written by `cargo xtask conformance
//! --refresh-oracle`), so that `cargo test` compares our decode with perf's view on a
//! machine without perf. Plus: the checks catch a wrong decode (tampered inputs), and
//! check 6 on the external corpus when `../shared/corpus` is present.

use conformance::checks::{Outcome, ScriptPlan};
use conformance::report::{self, Row};
use conformance::{ours, run_checks, stored_views};
use perfdata::generated::perf_data::{FeatureId, RecordBody, RecordType};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn fixtures_agree_with_stored_perf_output() {
    let root = workspace();
    let rows = conformance::stored_rows(&root).unwrap();
    assert!(rows.len() >= 20, "only {} fixtures", rows.len());
    let known = report::load_known_failures(&root.join("conformance/known-failures.txt")).unwrap();
    println!("{}", report::render(&rows, &known, false));
    let v = report::verdict(&rows, &known);
    assert!(
        v.ok(),
        "failures not in known-failures.txt: {:?}",
        v.unexpected
    );
    // Checks 1 and 2 ran on every fixture (stored output present).
    for r in &rows {
        for (check, cell) in report::CHECKS.iter().zip(&r.cells).take(2) {
            assert!(
                !matches!(cell, Outcome::Skip(_)),
                "{} / {check}: {cell} (run `cargo xtask conformance --refresh-oracle`)",
                r.name
            );
        }
    }
}

fn fixture(name: &str) -> PathBuf {
    workspace().join("conformance/fixtures").join(name)
}

/// Runs checks 1-3 on `bytes` (a modified copy of `fixture`) against the fixture's
/// stored perf output.
fn checks_on(fixture_name: &str, bytes: &[u8]) -> Row {
    let path = fixture(fixture_name);
    let d = ours::decode(bytes, &[]).unwrap();
    let plan = ScriptPlan::for_file(&d);
    let views = stored_views(&workspace(), &path, &plan);
    let mut row = Row::new(fixture_name);
    run_checks(&d, &views, &mut row);
    row
}

fn cell<'r>(row: &'r Row, check: &str) -> &'r Outcome {
    let i = report::CHECKS.iter().position(|c| *c == check).unwrap();
    &row.cells[i]
}

fn replace_once(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    assert_eq!(from.len(), to.len());
    let at = bytes
        .windows(from.len())
        .position(|w| w == from)
        .expect("pattern in the file");
    bytes[at..at + from.len()].copy_from_slice(to);
}

#[test]
fn unmodified_fixture_passes() {
    let bytes = std::fs::read(fixture("plain.data")).unwrap();
    let row = checks_on("plain.data", &bytes);
    for c in ["header", "records", "samples"] {
        assert!(
            matches!(cell(&row, c), Outcome::Pass(_)),
            "{c}: {}",
            cell(&row, c)
        );
    }
}

#[test]
fn a_wrong_header_value_is_caught() {
    let mut bytes = std::fs::read(fixture("plain.data")).unwrap();
    let d = ours::decode(&bytes, &[]).unwrap();
    let Some(perfdata::generated::perf_data::FeatureBody::Hostname(h)) =
        d.feature(FeatureId::HOSTNAME)
    else {
        panic!("no hostname")
    };
    let host = h.value.text.text().to_vec();
    let mut other = host.clone();
    other[0] ^= 0x20;
    replace_once(&mut bytes, &host, &other);
    let row = checks_on("plain.data", &bytes);
    let Outcome::Fail(lines) = cell(&row, "header") else {
        panic!("header check passed on a wrong hostname")
    };
    assert!(lines[0].contains("hostname"), "{lines:?}");
}

#[test]
fn a_wrong_record_value_is_caught() {
    let mut bytes = std::fs::read(fixture("plain.data")).unwrap();
    replace_once(&mut bytes, b"/usr/bin/dash\0", b"/usr/bin/dosh\0");
    let row = checks_on("plain.data", &bytes);
    let Outcome::Fail(lines) = cell(&row, "records") else {
        panic!("records check passed on a wrong MMAP2 filename")
    };
    assert!(lines[0].contains("MMAP2 filename"), "{lines:?}");
}

#[test]
fn a_wrong_sample_value_is_caught() {
    let mut bytes = std::fs::read(fixture("plain.data")).unwrap();
    let d = ours::decode(&bytes, &[]).unwrap();
    // The first sample's IP, found by value in the record's bytes.
    let (offset, size, ip) = d
        .records
        .iter()
        .find_map(|r| match &r.body {
            Ok(RecordBody::Sample(s)) => Some((r.offset as usize, r.size as usize, s.ip?)),
            _ => None,
        })
        .unwrap();
    let rec = &mut bytes[offset..offset + size];
    replace_once(rec, &ip.to_le_bytes(), &(ip ^ 0x10).to_le_bytes());
    let row = checks_on("plain.data", &bytes);
    for c in ["records", "samples"] {
        let Outcome::Fail(lines) = cell(&row, c) else {
            panic!("{c} check passed on a wrong sample IP")
        };
        assert!(lines[0].contains("ip"), "{c}: {lines:?}");
    }
}

#[test]
fn a_record_perf_does_not_show_is_caught() {
    // Turn the FINISHED_ROUND record into an unknown type: perf's stored output has a
    // FINISHED_ROUND at that offset, we now have something else.
    let mut bytes = std::fs::read(fixture("plain.data")).unwrap();
    let d = ours::decode(&bytes, &[]).unwrap();
    let r = d
        .records
        .iter()
        .find(|r| r.type_ == RecordType::FINISHED_ROUND)
        .unwrap();
    let at = r.offset as usize;
    replace_once(
        &mut bytes[at..at + 4],
        &RecordType::FINISHED_ROUND.0.to_le_bytes(),
        &60u32.to_le_bytes(),
    );
    let row = checks_on("plain.data", &bytes);
    let Outcome::Fail(lines) = cell(&row, "records") else {
        panic!("records check passed with a record changed")
    };
    assert!(
        lines
            .iter()
            .any(|l| l.contains("(stream, offset, size, type)")),
        "{lines:?}"
    );
}

#[test]
fn corpus_decodes() {
    let dir = workspace().join("../shared/corpus");
    if !dir.is_dir() {
        eprintln!("SKIP corpus: {} is absent", dir.display());
        return;
    }
    let mut failed = vec![];
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|e| e == "md") {
            continue;
        }
        n += 1;
        let (o, _) = conformance::decode_check(&p);
        println!("{}: {o}", p.display());
        if o.is_fail() {
            failed.push(p);
        }
    }
    assert!(n > 0);
    assert!(
        failed.is_empty(),
        "corpus files that do not decode: {failed:?}"
    );
}

#[test]
fn every_scenario_has_a_committed_fixture_with_perf_output() {
    let root = workspace();
    for s in conformance::scenarios::SCENARIOS {
        let f = fixture(&s.file_name());
        assert!(
            f.exists(),
            "no fixture {} (record-fixtures.sh)",
            f.display()
        );
        let stem = conformance::fixture_stem(&f);
        for ext in ["header", "dump"] {
            let p = conformance::oracle_dir(&root).join(format!("{stem}.{ext}.txt"));
            assert!(
                p.exists(),
                "no stored perf output {} (cargo xtask conformance --refresh-oracle)",
                p.display()
            );
        }
    }
}
