//! The `python` target: the Rust side of the Python package's entry points
//! (`perfdata-python`), called as the package calls them, on a recording the reader
//! opens — the samples' Arrow stream with a column selection and batch size taken from
//! the input, `info`, `report` (self and children), `collapse` and the header and record
//! dumps as JSON. Each gives an output or an error, never a panic; the samples streamed
//! with a selection of columns, in the order and with the repeats asked, are the whole
//! table's columns, batch for batch (as far as the whole table's walk went: a sample
//! damaged past the chosen columns' fields stops only that one); and streamed on two
//! worker threads they are the single walk's batches, ending with its error.
//!
//! Input: a byte `n`, then `n % 8` column bytes (each an index into the samples' columns,
//! modulo their number; none: every column), then the recording. The batch size is
//! `1 + n / 8`.

use crate::scratch;
use arrow_array::RecordBatch;
use perfdata::dump::{dump_recording, DumpOptions};
use perfdata::{PerfData, Recording};
use perfdata_analysis::analyses::collapse::{self, CollapseOptions};
use perfdata_analysis::analyses::info;
use perfdata_analysis::analyses::report::{self, ReportOptions, SortKey};
use perfdata_analysis::export::sample_stream::SampleSelection;
use perfdata_analysis::export::tables::{sample_name_fields, samples_schema};
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Inputs larger than this are cut.
const MAX_INPUT: usize = 1 << 20;
/// Dump lines past this many records are not written (the walk still goes on).
const DUMP_LIMIT: u64 = 256;

fn input_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| scratch::input_path("python"))
}

/// The batches of the samples' stream with `columns` (on `workers` threads; 1: the
/// single walk), and whether the walk ended without an error.
fn stream(
    rec: &Recording,
    opts: &AnalyzerOptions,
    events: &[String],
    columns: Option<&[String]>,
    batch_size: usize,
    workers: usize,
) -> (Vec<RecordBatch>, Result<(), String>) {
    let selection =
        SampleSelection::new(events.to_vec(), false, columns).expect("every column name is known");
    let schema = selection.schema();
    let mut batches = vec![];
    let result = selection
        .stream_parallel(rec, opts, batch_size, workers, &mut |b| {
            assert_eq!(b.schema(), schema, "a batch of another schema");
            batches.push(b);
            true
        })
        .map_err(|e| e.to_string());
    (batches, result)
}

/// The body; returns how many batches of a column selection it compared with the whole
/// table's (for the replay tests: that the oracle ran).
pub fn python(input: &[u8]) -> usize {
    let input = &input[..input.len().min(MAX_INPUT)];
    let Some((&n, rest)) = input.split_first() else {
        return 0;
    };
    let (picks, bytes) = rest.split_at(usize::from(n % 8).min(rest.len()));
    let batch_size = 1 + usize::from(n / 8);
    if PerfData::open(bytes).is_err() {
        return 0;
    }
    let path = input_path();
    std::fs::write(path, bytes).expect("writing the input");
    let Ok(rec) = Recording::open(path) else {
        return 0;
    };
    // Addresses only: no file of this machine is read for an input's maps.
    let opts = AnalyzerOptions {
        no_symbols: true,
        ..AnalyzerOptions::default()
    };
    let Ok(events) = Analyzer::open(&rec, &opts).map(|a| a.events) else {
        return 0;
    };
    let compared = samples(&rec, &opts, &events, picks, batch_size);
    summaries(&rec, &opts);
    compared
}

/// `Recording.samples(columns=…, batch_size=…)`: the selection's batches are the whole
/// table's, projected; how many were compared.
fn samples(
    rec: &Recording,
    opts: &AnalyzerOptions,
    events: &[String],
    picks: &[u8],
    batch_size: usize,
) -> usize {
    let all: Vec<String> = samples_schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .chain(sample_name_fields().iter().map(|f| f.name().clone()))
        .collect();
    let columns: Option<Vec<String>> = (!picks.is_empty()).then(|| {
        picks
            .iter()
            .map(|&p| all[usize::from(p) % all.len()].clone())
            .collect()
    });
    let (whole, whole_result) = stream(rec, opts, events, None, batch_size, 1);
    let (chosen, chosen_result) = stream(rec, opts, events, columns.as_deref(), batch_size, 1);
    // On two threads: the same batches (ids merged as one walk numbers them), the same
    // error.
    let (parallel, parallel_result) = stream(rec, opts, events, columns.as_deref(), batch_size, 2);
    assert_eq!(parallel_result, chosen_result, "two workers end otherwise");
    assert!(parallel == chosen, "two workers give other batches");
    let (whole_ok, chosen_ok) = (whole_result.is_ok(), chosen_result.is_ok());
    // Samples are decoded as far as the columns need: a sample damaged past the fields
    // of the chosen columns stops the whole table's walk only. Never the other way round.
    assert!(
        !whole_ok || chosen_ok,
        "the chosen columns' walk failed where the whole table's did not"
    );
    if whole_ok {
        assert_eq!(whole.len(), chosen.len(), "another number of batches");
    } else {
        assert!(
            whole.len() <= chosen.len(),
            "fewer batches of the chosen columns"
        );
    }
    for (i, b) in whole.iter().enumerate() {
        // Every batch is full but the last.
        if i + 1 < whole.len() {
            assert_eq!(b.num_rows(), batch_size, "batch {i} is not full");
        }
        assert!(b.num_rows() > 0, "an empty batch");
    }
    let Some(cols) = columns else {
        return 0;
    };
    let Some(schema) = whole.first().map(RecordBatch::schema) else {
        return 0;
    };
    let idx: Vec<usize> = cols
        .iter()
        .map(|c| schema.index_of(c).expect("a column of the whole table"))
        .collect();
    for (i, (w, c)) in whole.iter().zip(&chosen).enumerate() {
        let projected = w.project(&idx).expect("projecting");
        assert!(
            projected.columns() == c.columns(),
            "batch {i}: the columns {cols:?} differ from the whole table's"
        );
    }
    whole.len()
}

/// `info_json`, `report_json` (self and children), `collapse`, `header_json` and
/// `dump_lines(limit, salvage=True)`: an output or an error.
fn summaries(rec: &Recording, opts: &AnalyzerOptions) {
    // One analyzer replayed by each (every run starts from a reset machine), as a
    // Python session calls them one after another.
    if let Ok(mut a) = Analyzer::open(rec, opts) {
        if let Ok(i) = info::info(&mut a, 5) {
            serde_json::to_string(&i).expect("info as JSON");
        }
        for children in [false, true] {
            let keys = SortKey::parse("comm,dso,sym").expect("the package's default keys");
            let mut ropts = ReportOptions::table(keys);
            ropts.children = children;
            if let Ok(r) = report::report(&mut a, &ropts) {
                serde_json::to_string(&r).expect("a report as JSON");
            }
        }
        let copts = CollapseOptions {
            event: None,
            include_pid: true,
            include_tid: false,
            inline: false,
            off_cpu: None,
        };
        let _ = collapse::collapse(&mut a, &copts);
    }
    for (header_only, limit) in [(true, None), (false, Some(DUMP_LIMIT))] {
        let dopts = DumpOptions {
            header_only,
            limit,
            json: true,
            salvage: true,
            ..Default::default()
        };
        let _ = dump_recording(rec, &dopts, &mut std::io::sink());
    }
}
