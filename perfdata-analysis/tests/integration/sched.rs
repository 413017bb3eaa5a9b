//! The `sched_intervals` table written as Parquet by the export's `ExtraTable`, read back
//! with the `parquet` crate and checked against the library's timehist walk and against
//! perf sched timehist's own summary of the same recording (stored beside it by
//! `perfdata-cli/tests/data/sched/record.sh`).

#![cfg(feature = "parquet")]

use crate::common;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use perfdata::Recording;
use perfdata_analysis::analyses::sched::table;
use perfdata_analysis::analyses::sched::timehist::{self, Interval, TimehistOptions};
use perfdata_analysis::export::parquet::{Directory, ExportOptions, ExtraTable};
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn data() -> PathBuf {
    common::workspace().join("perfdata-cli/tests/data/sched")
}

fn no_chains() -> TimehistOptions {
    TimehistOptions {
        call_graph: false,
        ..TimehistOptions::default()
    }
}

#[test]
fn sched_intervals_read_back_equal_the_walk_and_perfs_summary() {
    let path = data().join("sched-threads.data");
    let rec = Recording::open(&path).unwrap();
    let mut a = Analyzer::open(&rec, &AnalyzerOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut parts = Directory::new(dir.path());
    let opts = ExportOptions::default();
    let mut t = ExtraTable::create(&mut parts, table::TABLE, 3, table::schema(), &opts).unwrap();
    // Small batches: several of them.
    let rows = table::intervals(&mut a, &no_chains(), 16, &mut |b| t.write(b)).unwrap();
    t.finish(&mut parts).unwrap();
    assert!(rows > 50, "{rows} rows");

    let mut walked: Vec<Interval> = vec![];
    timehist::timehist(
        &mut a,
        &no_chains(),
        &mut std::io::sink(),
        Some(&mut |i| walked.push(i)),
    )
    .unwrap();
    let file = dir
        .path()
        .join("sched_intervals/recording=3/part-0.parquet");
    let batches: Vec<RecordBatch> =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file).unwrap())
            .unwrap()
            .build()
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    let u64s = |b: &RecordBatch, c: &str| -> Vec<u64> {
        b.column_by_name(c)
            .unwrap()
            .as_primitive::<UInt64Type>()
            .values()
            .to_vec()
    };
    let mut read = 0;
    // Per tid: (rows, Σ run, Σ wait, Σ delay).
    let mut per_tid: BTreeMap<i32, (u64, u64, u64, u64)> = BTreeMap::new();
    for b in &batches {
        let tid = b.column_by_name("tid").unwrap().as_primitive::<Int32Type>();
        let (start, end, run) = (u64s(b, "start"), u64s(b, "end"), u64s(b, "run"));
        let (wait, delay) = (u64s(b, "wait"), u64s(b, "delay"));
        let state = b.column_by_name("state").unwrap().as_string::<i32>();
        for r in 0..b.num_rows() {
            let w = &walked[read];
            assert_eq!(
                (tid.value(r), start[r], end[r], run[r], wait[r], delay[r]),
                (w.tid, w.start, w.end, w.run, w.wait, w.delay),
                "row {read}"
            );
            assert_eq!(state.value(r), w.state.to_string());
            assert_eq!(run[r], end[r] - start[r]);
            assert!(delay[r] <= wait[r] || w.wait_state == Some('R') || wait[r] == 0);
            let e = per_tid.entry(tid.value(r)).or_default();
            e.0 += 1;
            e.1 += run[r];
            e.2 += wait[r];
            e.3 += delay[r];
            read += 1;
        }
        assert!(b.column_by_name("waker_pid").unwrap().null_count() <= b.num_rows());
    }
    assert_eq!(read as u64, rows);
    assert_eq!(read, walked.len());

    // perf's wait-time summary of the same recording: per task, run time, sleep + iowait
    // + preempt, and delay, in msec.usec.
    let summary = std::fs::read_to_string(data().join("perf-timehist-s-state.txt")).unwrap();
    let ms = |ns: u64| format!("{}.{:03}", ns / 1_000_000, ns % 1_000_000 / 1000);
    let mut checked = 0;
    for l in summary.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let Some(tid) = f.first().and_then(|c| {
            let inner = c.rsplit_once('[')?.1.trim_end_matches(']');
            inner.split('/').next()?.parse::<i32>().ok()
        }) else {
            continue;
        };
        let (run, sleep, iowait, preempt, delay) = (f[3], f[4], f[5], f[6], f[7]);
        let Some(&(_, r, w, d)) = per_tid.get(&tid) else {
            // A task that never ran after a switch-in the recording saw.
            assert_eq!(run, "0.000", "{l}");
            continue;
        };
        assert_eq!(ms(r), run, "{l}");
        assert_eq!(ms(d), delay, "{l}");
        let perf_wait: u64 = [sleep, iowait, preempt]
            .iter()
            .map(|v| {
                let (a, b) = v.split_once('.').unwrap();
                a.parse::<u64>().unwrap() * 1000 + b.parse::<u64>().unwrap()
            })
            .sum();
        // Each of perf's three sums is truncated to the microsecond on its own.
        let ours_us = w / 1000;
        assert!(ours_us.abs_diff(perf_wait) <= 2, "{l}: ours {ours_us} us");
        checked += 1;
    }
    assert!(checked >= 2, "{checked} tasks checked");
}
