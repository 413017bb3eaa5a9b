//! A damaged feature section (cut short, pointing past the end, garbage inside, a cut
//! feature table) is reported — typed, with its offset and feature id — and skipped:
//! every record still reads, `perfdata dump` prints everything else and exits 1, and the
//! rewrites carry the damaged bytes as they are. The damaged files are made here from a
//! fixture by patching its feature table or payloads.

use crate::common;
use common::fixture;

use perfdata::types::FeatureId;
use perfdata::write::{convert_file, Builder, ConvertOptions, WriteOptions};
use perfdata::PerfData;
use std::io::Cursor;
use std::process::Command;

const FIXTURE: &str = "callchain.data";

/// Position of `id`'s entry in the feature table of a little-endian file.
fn table_entry(bytes: &[u8], id: FeatureId) -> usize {
    let data = PerfData::open(bytes).unwrap();
    let index = data.features.iter().position(|f| f.id == id).unwrap();
    let h = data.header.as_ref().unwrap();
    (h.data.offset + h.data.size) as usize + 16 * index
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// The damaged variants, each with what its problem must say.
fn damaged() -> Vec<(&'static str, Vec<u8>)> {
    let good = fixture(FIXTURE);
    let entry = table_entry(&good, FeatureId::CPUDESC);
    let (offset, size) = (u64_at(&good, entry) as usize, u64_at(&good, entry + 8));
    let mut out = vec![];

    // Cut short: the section says fewer bytes than its string's length field needs.
    let mut b = good.clone();
    put_u64(&mut b, entry + 8, 6);
    out.push(("cut short", b));

    // The section runs past the end of the file.
    let mut b = good.clone();
    put_u64(&mut b, entry + 8, size + (1 << 40));
    out.push(("size past the end", b));

    // Garbage inside: the string's length field (the first u32) is huge.
    let mut b = good.clone();
    b[offset..offset + 4].copy_from_slice(&0xfff0_0000u32.to_le_bytes());
    out.push(("garbage inside", b));

    // The file ends inside the CPUDESC section (the later features are gone too).
    out.push(("file cut inside", good[..offset + 10].to_vec()));

    // The feature table itself is cut: the file ends inside CPUDESC's table entry.
    out.push(("table cut", good[..entry + 4].to_vec()));
    out
}

fn record_count(data: &PerfData<'_>) -> usize {
    let mut n = 0;
    data.for_each_record(&mut |_, rec, ctx| {
        data.decode(&rec, ctx)?;
        n += 1;
        Ok(true)
    })
    .unwrap();
    n
}

#[test]
fn a_damaged_feature_is_reported_with_offset_and_id_and_every_record_reads() {
    let good = fixture(FIXTURE);
    let intact = PerfData::open(&good).unwrap();
    assert!(intact.feature_problems().is_empty());
    let records = record_count(&intact);
    assert!(records > 10);
    for (what, bytes) in damaged() {
        let data = PerfData::open(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        let problems = data.feature_problems();
        assert!(!problems.is_empty(), "{what}: no problem reported");
        let cpudesc = problems
            .iter()
            .find(|e| e.feature() == Some("8 CPUDESC"))
            .unwrap_or_else(|| panic!("{what}: CPUDESC not named in {problems:?}"));
        assert!(cpudesc.offset().is_some(), "{what}: no offset in {cpudesc}");
        assert!(cpudesc.to_string().contains("CPUDESC"), "{what}: {cpudesc}");
        for e in &problems {
            assert!(e.offset().is_some() && e.feature().is_some(), "{what}: {e}");
        }
        if what == "table cut" {
            // The sections the surviving entries list are past the cut too.
            continue;
        }
        assert_eq!(data.damaged_features()[0], FeatureId::CPUDESC, "{what}");
        // The features before it are intact.
        for f in data.features.iter().filter(|f| f.id.0 < 8) {
            data.feature(f)
                .unwrap_or_else(|e| panic!("{what}: feature {} damaged too: {e}", f.id));
        }
        assert_eq!(record_count(&data), records, "{what}: records lost");
    }
}

#[test]
fn rewrites_keep_the_damaged_bytes_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    for (what, bytes) in damaged() {
        let data = PerfData::open(&bytes).unwrap();
        // The model path: copy-through and typed.
        let mut file = Builder::read(&data).unwrap();
        let out = |file: &Builder<'_>| {
            let mut c = Cursor::new(vec![]);
            file.write_to(&mut c, WriteOptions::default()).unwrap();
            c.into_inner()
        };
        let copied = out(&file);
        file.make_typed().unwrap();
        assert!(
            out(&file) == copied,
            "{what}: typed differs from copy-through"
        );
        let reread = PerfData::open(&copied).unwrap();
        if what == "garbage inside" || what == "cut short" {
            // Sections inside the file: rewritten to the same bytes.
            assert!(copied == bytes, "{what}: copy-through is not byte-exact");
        }
        if what != "table cut" {
            // The damaged section's bytes (those in the file) are carried as they were.
            let cpudesc = |d: &PerfData<'_>| {
                let f = d
                    .features
                    .iter()
                    .find(|f| f.id == FeatureId::CPUDESC)
                    .unwrap();
                d.feature_bytes_in_file(f).to_vec()
            };
            assert!(cpudesc(&reread) == cpudesc(&data), "{what}");
            // (A section running past the end keeps the rest of the file, in which
            // the string it holds is whole again.)
            if what != "size past the end" {
                assert_eq!(
                    reread.damaged_features().first(),
                    Some(&FeatureId::CPUDESC),
                    "{what}"
                );
            }
        }
        assert_eq!(record_count(&reread), record_count(&data), "{what}");

        // save() reads its output back: the carried damage does not stop it.
        let saved = dir.path().join("saved.data");
        file.save(&saved, WriteOptions::default())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(std::fs::read(&saved).unwrap() == copied, "{what}");

        // The streaming conversions.
        let input = dir.path().join("damaged.data");
        std::fs::write(&input, &bytes).unwrap();
        for (how, opts) in [
            ("copy", ConvertOptions::default()),
            (
                "typed",
                ConvertOptions {
                    typed: true,
                    ..Default::default()
                },
            ),
        ] {
            let output = dir.path().join(format!("{how}.data"));
            convert_file(&input, &output, &opts).unwrap_or_else(|e| panic!("{what} {how}: {e}"));
            assert!(std::fs::read(&output).unwrap() == copied, "{what} {how}");
        }
        // Another byte order cannot decode the damaged section: a clear error naming it.
        let big = ConvertOptions {
            endian: Some(perfdata::rt::Endianness::Big),
            ..Default::default()
        };
        if file.damaged_features().contains(&FeatureId::CPUDESC) {
            let e = convert_file(&input, &dir.path().join("big.data"), &big).unwrap_err();
            assert!(e.to_string().contains("CPUDESC"), "{what}: {e}");
            assert!(e.to_string().contains("damaged.data"), "{what}: {e}");
            assert!(!dir.path().join("big.data").exists());
        }
    }
}

#[test]
fn dump_prints_the_problem_and_every_record_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.data");
    std::fs::write(&good, fixture(FIXTURE)).unwrap();
    let run = |path: &std::path::Path, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .arg("dump")
            .arg(path)
            .args(args)
            .output()
            .unwrap()
    };
    let intact = run(&good, &[]);
    assert_eq!(intact.status.code(), Some(0));
    let lines = |o: &std::process::Output, prefix: &str| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.starts_with(prefix))
            .count()
    };
    let records = lines(&intact, "#");
    for (what, bytes) in damaged() {
        let path = dir.path().join("damaged.data");
        std::fs::write(&path, &bytes).unwrap();
        let out = run(&path, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
        assert!(
            stderr.contains("damaged.data"),
            "{what}: no path in {stderr}"
        );
        assert!(stderr.contains("CPUDESC"), "{what}: {stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("# feature 8 CPUDESC: damaged, skipped")
                || stdout.contains("# feature table: cut short from feature 8"),
            "{what}"
        );
        assert_eq!(lines(&out, "#"), records, "{what}: records missing");

        let json = run(&path, &["--json"]);
        assert_eq!(json.status.code(), Some(1));
        let error_lines: Vec<serde_json::Value> = String::from_utf8_lossy(&json.stdout)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v.get("error").is_some())
            .collect();
        assert!(
            error_lines
                .iter()
                .any(|l| l["id"] == 8 && l["feature"] == "CPUDESC"),
            "{what}: {error_lines:?}"
        );
    }
}
