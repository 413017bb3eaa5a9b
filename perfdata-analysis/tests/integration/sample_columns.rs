//! `TableBuilder::with_sample_columns`: a builder asked for some of the samples' columns
//! gives exactly those columns of the full build, row for row.

#![cfg(feature = "arrow")]

use arrow_array::RecordBatch;
use perfdata::Recording;
use perfdata_analysis::export::tables::{TableBuilder, TableKind};
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::path::Path;

fn samples(path: &Path, columns: Option<&[usize]>) -> Vec<RecordBatch> {
    let rec = Recording::open(path).unwrap();
    let mut a = Analyzer::open(&rec, &AnalyzerOptions::default()).unwrap();
    let mut tables = TableBuilder::new(a.events.clone(), true).with_names();
    if let Some(c) = columns {
        tables = tables.with_sample_columns(c);
    }
    let mut out = vec![];
    a.run(
        Default::default(),
        |machine, item| -> Result<bool, perfdata_analysis::AnalysisError> {
            tables.add(machine, item)?;
            if let Some(b) = tables.take(TableKind::Samples, 5)? {
                out.push(b);
            }
            Ok(true)
        },
    )
    .unwrap();
    if let Some(b) = tables.take(TableKind::Samples, 0).unwrap() {
        out.push(b);
    }
    out
}

#[test]
fn projected_columns_equal_the_full_build_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for path in [
        root.join("samples/wordfreq.data"),
        root.join("conformance/fixtures/multi-event.data"),
    ] {
        let full = samples(&path, None);
        let schema = full[0].schema();
        let name = |n: &str| schema.index_of(n).unwrap();
        // Cheap columns only (no stack resolved), then the stack and name columns.
        for columns in [
            vec![name("ip"), name("time"), name("tid"), name("period")],
            vec![
                name("tid"),
                name("stack_id"),
                name("symbol"),
                name("stack"),
                name("weight"),
            ],
        ] {
            let mut sorted = columns.clone();
            sorted.sort_unstable();
            let projected = samples(&path, Some(&sorted));
            let rows: usize = projected.iter().map(|b| b.num_rows()).sum();
            assert_eq!(rows, full.iter().map(|b| b.num_rows()).sum::<usize>());
            assert!(rows > 0, "{}", path.display());
            // The same batches (rows are counted alike), each the full one's projection.
            let want: Vec<RecordBatch> = full.iter().map(|b| b.project(&sorted).unwrap()).collect();
            assert_eq!(projected, want, "{} {columns:?}", path.display());
        }
    }
}
