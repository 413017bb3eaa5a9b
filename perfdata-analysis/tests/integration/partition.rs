//! A recording read in byte ranges (`partition::byte_ranges`, `AnalyzerOptions::byte_range`):
//! the ranges cover its records, and their samples are, together, the recording's, each
//! once, named as in the whole walk — in files with rounds, without rounds, compressed,
//! pipes.

use crate::common;
use perfdata::types::RecordType;
use perfdata::write::{Builder, WriteOptions};
use perfdata::{PerfData, Recording};
use perfdata_analysis::analyses::collapse;
use perfdata_analysis::{partition, Analyzer, AnalyzerOptions};
use std::collections::BTreeMap;
use std::path::Path;

fn stacks(path: &Path, byte_range: Option<(u64, u64)>) -> BTreeMap<String, u64> {
    let rec = Recording::open(path).unwrap();
    let opts = AnalyzerOptions {
        byte_range,
        ..AnalyzerOptions::default()
    };
    let mut a = Analyzer::open(&rec, &opts).unwrap();
    collapse::collapse(&mut a, &collapse::CollapseOptions::default()).unwrap()
}

fn check(path: &Path, split: u64, at_least: usize) {
    let rec = Recording::open(path).unwrap();
    let ranges = partition::byte_ranges(&rec, split).unwrap();
    let data = rec.data().unwrap();
    let (start, end) = (
        data.data_offset(),
        data.data_offset() + data.data().len() as u64,
    );
    assert!(ranges.len() >= at_least, "{}: {ranges:?}", path.display());
    assert_eq!(ranges.first().unwrap().0, start);
    assert_eq!(ranges.last().unwrap().1, end);
    assert!(ranges
        .windows(2)
        .all(|w| w[0].1 == w[1].0 && w[0].0 < w[0].1));
    let whole = stacks(path, None);
    let mut parts: BTreeMap<String, u64> = BTreeMap::new();
    for r in &ranges {
        for (k, v) in stacks(path, Some(*r)) {
            *parts.entry(k).or_default() += v;
        }
    }
    assert!(!whole.is_empty());
    assert_eq!(parts, whole, "{}", path.display());
}

#[test]
fn byte_ranges_split_the_samples_of_files_with_rounds_compressed_and_pipes() {
    // Split at every round: a range per round (these end with one, so as many as rounds).
    for (name, rounds) in [
        ("callchain.data", 1),
        ("compressed.data", 1),
        ("pipe-tracepoint.pipe.data", 3),
        ("switch-cpu-wide.data", 2),
        ("tracepoint.data", 3),
    ] {
        check(&common::fixture_path(name), 1, rounds);
    }
    // A file no larger than the split: one range.
    let rec = Recording::open(common::fixture_path("plain.data")).unwrap();
    assert_eq!(partition::byte_ranges(&rec, 1 << 30).unwrap().len(), 1);
}

#[test]
fn without_rounds_a_file_is_cut_after_any_record() {
    let bytes = common::fixture("callchain.data");
    let data = PerfData::open(&bytes).unwrap();
    let mut b = Builder::read(&data).unwrap();
    b.records.retain(|r| r.ty != RecordType::FINISHED_ROUND);
    b.placement = None;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-rounds.data");
    let mut out = std::io::Cursor::new(Vec::new());
    b.write_to(&mut out, WriteOptions::default()).unwrap();
    std::fs::write(&path, out.into_inner()).unwrap();
    check(&path, 1024, 3);
}

#[test]
fn a_threads_directory_is_not_cut_in_byte_ranges() {
    let rec = Recording::open(common::fixture_path("threads.data")).unwrap();
    let e = partition::byte_ranges(&rec, 1).unwrap_err();
    assert!(e.to_string().contains("by stream"), "{e}");
    let opts = AnalyzerOptions {
        byte_range: Some((0, 1)),
        ..AnalyzerOptions::default()
    };
    assert!(Analyzer::open(&rec, &opts).is_err());
}
