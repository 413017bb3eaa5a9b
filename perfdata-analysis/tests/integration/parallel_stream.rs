//! `SampleSelection::stream_parallel`: the samples built on several threads are the
//! single walk's batches — the same rows, in the same order, cut into the same batches,
//! with the same stack and frame ids — on every fixture and corpus file, with few and
//! many chunks; a damaged record ends both with the same batches and the same error; a
//! reader that stops early stops the workers.

#![cfg(feature = "arrow")]

use crate::common;
use arrow_array::{Array, ListArray, RecordBatch, StringArray, UInt64Array};
use perfdata::rt::Array as RtArray;
use perfdata::types::Callchain;
use perfdata::{PerfData, Recording};
use perfdata_analysis::export::sample_stream::SampleSelection;
use perfdata_analysis::export::tables::{sample_name_fields, samples_schema};
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::path::Path;

/// The batches of a stream (on `workers` threads; 1: the single walk), and its error.
fn batches(
    rec: &Recording,
    opts: &AnalyzerOptions,
    columns: Option<&[String]>,
    batch_size: usize,
    workers: usize,
) -> (Vec<RecordBatch>, Option<String>) {
    let events = Analyzer::open(rec, opts).unwrap().events;
    let selection = SampleSelection::new(events, !opts.no_symbols, columns).unwrap();
    let mut out = vec![];
    let mut push = |b: RecordBatch| {
        out.push(b);
        true
    };
    let result = if workers == 1 {
        selection.stream(rec, opts, batch_size, &mut push)
    } else {
        selection.stream_parallel(rec, opts, batch_size, workers, &mut push)
    };
    (out, result.err().map(|e| e.to_string()))
}

fn all_columns() -> Vec<String> {
    let mut names: Vec<String> = samples_schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    names.extend(sample_name_fields().iter().map(|f| f.name().clone()));
    names
}

fn ids_only() -> Vec<String> {
    ["leaf_frame", "tid", "stack_id"].map(String::from).to_vec()
}

/// Every worker count and batch size against the single walk; the number of rows.
fn check(path: &Path, opts: &AnalyzerOptions) -> usize {
    let Ok(rec) = Recording::open(path) else {
        return 0;
    };
    if Analyzer::open(&rec, opts).is_err() {
        return 0;
    }
    let mut rows = 0;
    for columns in [all_columns(), ids_only()] {
        // Batches of 1 and 3 rows make chunks of 4 and 12: many chunks per worker; the
        // largest batch makes one chunk of everything (its row count saturates).
        for batch_size in [1, 3, 65536, usize::MAX] {
            let (one, one_err) = batches(&rec, opts, Some(&columns), batch_size, 1);
            for workers in [2, 3] {
                let (many, many_err) = batches(&rec, opts, Some(&columns), batch_size, workers);
                let what = format!(
                    "{}: {workers} workers, batches of {batch_size}, {columns:?}",
                    path.display()
                );
                assert_eq!(many_err, one_err, "{what}");
                assert_eq!(many.len(), one.len(), "{what}");
                for (i, (a, b)) in one.iter().zip(&many).enumerate() {
                    assert!(a == b, "{what}: batch {i} differs\n{a:?}\n{b:?}");
                }
            }
            rows = one.iter().map(RecordBatch::num_rows).sum();
        }
    }
    rows
}

#[test]
fn many_workers_give_the_single_walks_batches_on_every_fixture_and_corpus_file() {
    let no_symbols = AnalyzerOptions {
        no_symbols: true,
        ..AnalyzerOptions::default()
    };
    let mut files = common::fixture_and_corpus_files();
    // The `--threads` directory as a whole, and read by one of its streams.
    files.push(common::fixture_path("threads.data"));
    let mut with_rows = 0;
    for path in &files {
        if check(path, &no_symbols) > 0 {
            with_rows += 1;
        }
    }
    assert!(with_rows >= 20, "{with_rows} files with samples");
    // Symbols and lines, DWARF unwinding, PERF_SAMPLE_READ expanded into one sample per
    // counter, one stream of a directory, a byte range.
    for (name, opts) in [
        ("wordfreq", AnalyzerOptions::default()),
        ("dwarf.data", AnalyzerOptions::default()),
        ("group-read.data", no_symbols.clone()),
        (
            "threads.data",
            AnalyzerOptions {
                stream: Some(2),
                ..no_symbols.clone()
            },
        ),
    ] {
        let path = if name == "wordfreq" {
            common::sample_path("wordfreq.data")
        } else {
            common::fixture_path(name)
        };
        assert!(check(&path, &opts) > 0, "{name}");
    }
    let path = common::fixture_path("tracepoint.data");
    let rec = Recording::open(&path).unwrap();
    let ranges = perfdata_analysis::partition::byte_ranges(&rec, 1).unwrap();
    let opts = AnalyzerOptions {
        byte_range: Some(ranges[1]),
        ..no_symbols.clone()
    };
    assert!(check(&path, &opts) > 0);
}

#[test]
fn the_ids_are_numbered_as_one_walk_numbers_them() {
    // The workers number their stacks from 0 each: without the merge, a second worker's
    // first stack would be 0 again, for another stack. Merged, an id is one stack (its
    // frames' names; two stacks may share them, at other addresses in the same
    // functions), numbered 0, 1, 2… in order of first use.
    let path = common::sample_path("wordfreq.data");
    let rec = Recording::open(&path).unwrap();
    let opts = AnalyzerOptions::default();
    let columns = ["stack_id", "stack"].map(String::from);
    let (many, _) = batches(&rec, &opts, Some(&columns), 2, 2);
    let mut stacks: Vec<Vec<String>> = vec![];
    for b in &many {
        let ids = b.column(0).as_any().downcast_ref::<UInt64Array>().unwrap();
        let names = b.column(1).as_any().downcast_ref::<ListArray>().unwrap();
        for (row, id) in ids.iter().enumerate() {
            let frames = names.value(row);
            let frames = frames.as_any().downcast_ref::<StringArray>().unwrap();
            let stack: Vec<String> = frames.iter().map(|f| f.unwrap().to_string()).collect();
            let id = id.unwrap() as usize;
            if id == stacks.len() {
                stacks.push(stack);
            } else {
                assert!(id < stacks.len(), "stack id {id} before {}", stacks.len());
                assert_eq!(stacks[id], stack, "stack id {id}");
            }
        }
    }
    assert!(stacks.len() > 10, "{} distinct stacks", stacks.len());
}

#[test]
fn a_damaged_record_ends_every_walk_alike() {
    // A sample two thirds in says its callchain has 2^32-1 entries: the walk stops there,
    // after the samples before it (in time order) were delivered.
    let path = common::sample_path("wordfreq.data");
    let mut bytes = std::fs::read(&path).unwrap();
    let data = PerfData::open(&bytes).unwrap();
    let mut chains = vec![];
    data.for_each_record(&mut |_, rec, ctx| {
        if let Some(view) = data.sample(&rec, ctx)? {
            if let Some(Callchain {
                ips: RtArray::Borrowed { bytes: ips, .. },
            }) = view.callchain()?
            {
                // The count is the 8 bytes before the entries.
                chains.push(ips.as_ptr() as usize - 8);
            }
        }
        Ok(true)
    })
    .unwrap();
    let at = chains[chains.len() * 2 / 3] - bytes.as_ptr() as usize;
    drop(data);
    bytes[at..at + 8].copy_from_slice(&u64::from(u32::MAX).to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("damaged.data");
    std::fs::write(&damaged, &bytes).unwrap();
    let rec = Recording::open(&damaged).unwrap();
    let opts = AnalyzerOptions {
        no_symbols: true,
        ..AnalyzerOptions::default()
    };
    let (one, err) = batches(&rec, &opts, Some(&ids_only()), 5, 1);
    let err = err.expect("the damaged record is an error");
    assert!(err.contains("callchain"), "{err}");
    assert!(one.len() > 100, "{} batches before the error", one.len());
    for workers in [2, 3] {
        let (many, many_err) = batches(&rec, &opts, Some(&ids_only()), 5, workers);
        assert_eq!(many_err.as_deref(), Some(err.as_str()));
        assert_eq!(many, one);
    }
}

#[test]
fn a_reader_that_stops_stops_the_workers() {
    let path = common::sample_path("wordfreq.data");
    let rec = Recording::open(&path).unwrap();
    let opts = AnalyzerOptions {
        no_symbols: true,
        ..AnalyzerOptions::default()
    };
    let events = Analyzer::open(&rec, &opts).unwrap().events;
    for workers in [2, 3] {
        let selection = SampleSelection::new(events.clone(), false, None).unwrap();
        let mut got = 0;
        // Returns (the scope joins every worker) once the reader says stop.
        selection
            .stream_parallel(&rec, &opts, 1, workers, &mut |_| {
                got += 1;
                got < 3
            })
            .unwrap();
        assert_eq!(got, 3);
    }
}

#[test]
fn a_damaged_header_is_reported_as_the_single_walk_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.data");
    let mut bytes = std::fs::read(common::sample_path("wordfreq.data")).unwrap();
    // The attrs section runs past the end.
    bytes.truncate(200);
    std::fs::write(&path, &bytes).unwrap();
    let rec = Recording::open(&path).unwrap();
    let opts = AnalyzerOptions::default();
    let one = SampleSelection::new(vec![], false, None)
        .unwrap()
        .stream(&rec, &opts, 10, &mut |_| true)
        .unwrap_err();
    let many = SampleSelection::new(vec![], false, None)
        .unwrap()
        .stream_parallel(&rec, &opts, 10, 2, &mut |_| true)
        .unwrap_err();
    assert_eq!(many.to_string(), one.to_string());
}
