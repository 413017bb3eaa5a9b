//! The Parquet export read back with the `parquet` crate (no Python, no SQL engine) and
//! checked against the library's own walk of the same recordings.

#![cfg(feature = "parquet")]

use crate::common;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use perfdata::Recording;
use perfdata_analysis::export::parquet::{
    self as export, samples_schema, ExportOptions, ExportSummary,
};
use perfdata_analysis::{Analyzer, AnalyzerOptions, Frame};
use std::collections::HashMap;
use std::path::Path;

fn read(dir: &Path, table: &str, recording: u32) -> Vec<RecordBatch> {
    let path = dir
        .join(table)
        .join(format!("recording={recording}"))
        .join("part-0.parquet");
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

fn opts(symbolize: bool) -> ExportOptions {
    ExportOptions {
        symbolize,
        // Small row groups: several per file, as a large recording has.
        row_group_size: 7,
    }
}

/// One recording exported as partition `recording` of the tables under `dir`.
fn export_recording(
    path: &Path,
    recording: u32,
    dir: &Path,
    opts: &ExportOptions,
) -> Result<ExportSummary, perfdata_analysis::AnalysisError> {
    let rec = Recording::open(path)?;
    let mut a = Analyzer::open(&rec, &opts.analyzer_options(&AnalyzerOptions::default()))?;
    export::export(&mut a, recording, opts, &mut export::Directory::new(dir))
}

/// Per sample: (event, time, tid, period, frame addresses leaf first), from the library.
type Expected = Vec<(String, Option<u64>, i32, u64, Vec<u64>)>;

fn expected(path: &Path) -> Expected {
    let rec = Recording::open(path).unwrap();
    let mut a = Analyzer::open(
        &rec,
        &AnalyzerOptions {
            no_symbols: true,
            ..AnalyzerOptions::default()
        },
    )
    .unwrap();
    let events = a.events.clone();
    let mut out = vec![];
    let mut frames: Vec<Frame> = vec![];
    a.run(
        Default::default(),
        |m, item| -> Result<bool, perfdata_analysis::AnalysisError> {
            if let Some(s) = &item.sample {
                m.frames(s, &mut frames)?;
                out.push((
                    events[s.event].clone(),
                    s.time,
                    s.tid,
                    s.period,
                    frames.iter().map(|f| f.ip).collect(),
                ));
            }
            Ok(true)
        },
    )
    .unwrap();
    out
}

#[test]
fn every_sample_and_its_stack_read_back_equal_to_the_walk() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "callchain.data",
        "multi-event.data",
        "group-read.data",
        "pipe-callchain.pipe.data",
        "threads.data",
        "sample-fields.data",
    ];
    for (i, name) in names.iter().enumerate() {
        let path = common::fixture_path(name);
        let summary = export_recording(&path, i as u32, dir.path(), &opts(i % 2 == 0)).unwrap();
        let want = expected(&path);
        assert_eq!(summary.samples, want.len() as u64, "{name}");

        let frames = read(dir.path(), "frames", i as u32);
        let mut address: HashMap<u64, u64> = HashMap::new();
        for b in &frames {
            let id = b.column(0).as_primitive::<UInt64Type>();
            let addr = b.column(2).as_primitive::<UInt64Type>();
            for r in 0..b.num_rows() {
                assert!(
                    address.insert(id.value(r), addr.value(r)).is_none(),
                    "{name}: frame ids unique"
                );
            }
        }
        let stacks = read(dir.path(), "stacks", i as u32);
        let mut stack: HashMap<u64, Vec<u64>> = HashMap::new();
        for b in &stacks {
            let id = b.column(0).as_primitive::<UInt64Type>();
            let list = b.column(1).as_list::<i32>();
            for r in 0..b.num_rows() {
                let ids = list.value(r);
                let ids = ids.as_primitive::<UInt64Type>();
                let addrs = ids.values().iter().map(|f| address[f]).collect();
                assert!(
                    stack.insert(id.value(r), addrs).is_none(),
                    "{name}: stack ids unique"
                );
            }
        }
        let samples = read(dir.path(), "samples", i as u32);
        assert_eq!(
            samples[0].schema().fields().len(),
            samples_schema().fields().len()
        );
        let mut got: Expected = vec![];
        for b in &samples {
            let event = b.column_by_name("event").unwrap().as_string::<i32>();
            let time = b
                .column_by_name("time")
                .unwrap()
                .as_primitive::<UInt64Type>();
            let tid = b.column_by_name("tid").unwrap().as_primitive::<Int32Type>();
            let period = b
                .column_by_name("period")
                .unwrap()
                .as_primitive::<UInt64Type>();
            let ip = b.column_by_name("ip").unwrap().as_primitive::<UInt64Type>();
            let stack_id = b
                .column_by_name("stack_id")
                .unwrap()
                .as_primitive::<UInt64Type>();
            let leaf = b
                .column_by_name("leaf_frame")
                .unwrap()
                .as_primitive::<UInt64Type>();
            for r in 0..b.num_rows() {
                assert_eq!(
                    address[&leaf.value(r)],
                    ip.value(r),
                    "{name}: leaf frame is the ip"
                );
                got.push((
                    event.value(r).to_string(),
                    (!time.is_null(r)).then(|| time.value(r)),
                    tid.value(r),
                    period.value(r),
                    stack[&stack_id.value(r)].clone(),
                ));
            }
        }
        assert_eq!(got, want, "{name}");

        let recs = read(dir.path(), "recordings", i as u32);
        assert_eq!(recs[0].num_rows(), 1);
        let n = recs[0]
            .column_by_name("samples")
            .unwrap()
            .as_primitive::<UInt64Type>()
            .value(0);
        assert_eq!(n, want.len() as u64);
        // stack_frames: the stacks' lists exploded, (stack, depth) → frame.
        let mut exploded: HashMap<u64, Vec<(u32, u64)>> = HashMap::new();
        for b in read(dir.path(), "stack_frames", i as u32) {
            let id = b.column(0).as_primitive::<UInt64Type>();
            let depth = b.column(1).as_primitive::<UInt32Type>();
            let frame = b.column(2).as_primitive::<UInt64Type>();
            for r in 0..b.num_rows() {
                exploded
                    .entry(id.value(r))
                    .or_default()
                    .push((depth.value(r), frame.value(r)));
            }
        }
        assert_eq!(exploded.len(), stack.len(), "{name}");
        for (id, mut rows) in exploded {
            rows.sort();
            let frames: Vec<u64> = rows.into_iter().map(|(_, f)| address[&f]).collect();
            assert_eq!(frames, stack[&id], "{name}: stack {id}");
        }
        // threads: one row per (pid, tid), for joins.
        let mut keys = std::collections::BTreeSet::new();
        let mut threads = 0;
        for b in read(dir.path(), "threads", i as u32) {
            let pid = b.column(0).as_primitive::<Int32Type>();
            let tid = b.column(1).as_primitive::<Int32Type>();
            for r in 0..b.num_rows() {
                assert!(keys.insert((pid.value(r), tid.value(r))), "{name}: twice");
                threads += 1;
            }
        }
        let mmaps: usize = read(dir.path(), "mmaps", i as u32)
            .iter()
            .map(|b| b.num_rows())
            .sum();
        assert!(
            threads > 0 && mmaps > 0,
            "{name}: {threads} threads, {mmaps} mmaps"
        );
    }
}

#[test]
fn symbolized_frames_name_what_the_report_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::fixture_path("callchain.data");
    export_recording(&path, 0, dir.path(), &opts(true)).unwrap();
    // The report's symbol names for this machine's view of the file.
    let rec = Recording::open(&path).unwrap();
    let mut a = Analyzer::open(&rec, &AnalyzerOptions::default()).unwrap();
    let mut names = std::collections::BTreeSet::new();
    a.run(
        Default::default(),
        |m, item| -> Result<bool, perfdata_analysis::AnalysisError> {
            if let Some(s) = &item.sample {
                if let Some(sym) = m.resolve(s.pid, s.kernel, s.ip).symbol {
                    names.insert(m.dsos.symbol_name(sym).to_string());
                }
            }
            Ok(true)
        },
    )
    .unwrap();
    let mut exported = std::collections::BTreeSet::new();
    for b in read(dir.path(), "frames", 0) {
        let f = b.column_by_name("function").unwrap().as_string::<i32>();
        for r in 0..b.num_rows() {
            if !f.is_null(r) {
                exported.insert(f.value(r).to_string());
            }
        }
    }
    assert!(names.is_subset(&exported), "{names:?} not in {exported:?}");
}

#[test]
fn a_failed_export_leaves_no_partial_table() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.data");
    std::fs::write(&junk, b"PERFILE2 but nothing else").unwrap();
    let out = dir.path().join("out");
    assert!(export_recording(&junk, 0, &out, &opts(false)).is_err());
    let leftovers: Vec<_> = walk(&out);
    assert!(
        leftovers.iter().all(|p| !p.ends_with("part-0.parquet")),
        "{leftovers:?}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}
