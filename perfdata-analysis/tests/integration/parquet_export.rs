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

#[test]
fn a_stack_met_again_after_its_library_is_remapped_is_resolved_again() {
    use perfdata::types::RecordBody;
    use perfdata::write::{Builder, RecordData, WriteOptions};
    // callchain.data, with libc mapped again at its addresses by another file after the
    // last sample, then the first libc sample again: the same process, ip and callchain
    // (a stack the export has resolved, and keeps by those), in another library now.
    let bytes = common::fixture("callchain.data");
    let data = perfdata::PerfData::open(&bytes).unwrap();
    let mut file = Builder::read(&data).unwrap();
    file.make_typed().unwrap();
    let body = |i: usize| match &file.records[i].data {
        RecordData::Typed(b) => Some((**b).clone()),
        RecordData::Raw { .. } => None,
    };
    let n = file.records.len();
    let libc = (0..n)
        .find(|&i| matches!(body(i), Some(RecordBody::Mmap2(m)) if m.filename.to_str_lossy().ends_with("/libc.so.6")))
        .expect("libc's MMAP2");
    let Some(RecordBody::Mmap2(mut remap)) = body(libc) else {
        unreachable!()
    };
    let range = remap.addr..remap.addr + remap.len;
    let in_libc = |ip: u64| range.contains(&ip);
    let sample = (0..n)
        .find(|&i| matches!(body(i), Some(RecordBody::Sample(s)) if s.ip.is_some_and(in_libc)))
        .expect("a sample in libc");
    let last = (0..n)
        .filter_map(|i| match body(i) {
            Some(RecordBody::Sample(s)) => s.time,
            _ => None,
        })
        .max()
        .unwrap();
    remap.filename = perfdata::rt::Str::padded("/elsewhere/libother.so", 8);
    remap.sample_id.as_mut().unwrap().time = Some(last + 1);
    let Some(RecordBody::Sample(mut again)) = body(sample) else {
        unreachable!()
    };
    again.time = Some(last + 2);
    let item = |i: usize, b: RecordBody<'static>| {
        let mut r = file.records[i].clone().into_owned();
        r.data = RecordData::Typed(Box::new(b));
        r
    };
    let (remap, again) = (
        item(libc, RecordBody::Mmap2(remap.into_owned())),
        item(sample, RecordBody::Sample(again.into_owned())),
    );
    file.records.extend([remap, again]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("remapped.data");
    file.save(&path, WriteOptions::default()).unwrap();

    let out = dir.path().join("tables");
    export_recording(&path, 0, &out, &opts(false)).unwrap();
    let mut dso: HashMap<u64, String> = HashMap::new();
    for b in read(&out, "frames", 0) {
        let id = b.column(0).as_primitive::<UInt64Type>();
        let name = b.column_by_name("dso").unwrap().as_string::<i32>();
        for r in 0..b.num_rows() {
            dso.insert(id.value(r), name.value(r).to_string());
        }
    }
    let mut leaves = vec![];
    for b in read(&out, "samples", 0) {
        let (ip, leaf) = (
            b.column_by_name("ip").unwrap().as_primitive::<UInt64Type>(),
            b.column_by_name("leaf_frame")
                .unwrap()
                .as_primitive::<UInt64Type>(),
        );
        for r in 0..b.num_rows() {
            leaves.push((ip.value(r), dso[&leaf.value(r)].clone()));
        }
    }
    let first = leaves.iter().find(|(ip, _)| in_libc(*ip)).unwrap();
    assert!(first.1.ends_with("/libc.so.6"), "{leaves:?}");
    let (ip, last_dso) = leaves.last().unwrap();
    assert_eq!(*ip, first.0);
    assert_eq!(last_dso, "/elsewhere/libother.so", "{leaves:?}");
}
