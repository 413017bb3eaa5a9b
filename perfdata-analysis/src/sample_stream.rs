//! The samples table streamed as Arrow batches with the columns a reader asked for, in
//! the order asked (what the Python package's `Recording.samples(columns=…)` returns):
//! only those columns are built (a [`TableBuilder`] with its sample columns chosen), then
//! put in the reader's order. Here rather than in the Python crate so that the walk the
//! package runs is the one the tests and the fuzz target run.

use crate::tables::{sample_name_fields, samples_schema, TableBuilder, TableKind, BATCH};
use crate::{Analyzer, AnalyzerOptions};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use perfdata::{Error, Recording};
use std::sync::Arc;

/// Which sample columns, in which order, and the builder that makes them.
pub struct SampleSelection {
    tables: TableBuilder,
    schema: SchemaRef,
    /// For each column asked for, its index among the columns built (which are in schema
    /// order, each once); `None`: every column, in schema order.
    order: Option<Vec<usize>>,
}

impl SampleSelection {
    /// The samples of a recording whose events are `events` (by attr index, as
    /// [`Analyzer::events`]); `symbolize` as [`TableBuilder::new`]. `columns`: names
    /// from [`samples_schema`] and [`sample_name_fields`], in any order, repeats allowed
    /// (`None`: all of them). The name columns cost a string per frame of every sample,
    /// so they are built only when one of them is asked for. An unknown name, or an empty
    /// list, is refused with the list of the known ones.
    pub fn new(
        events: Vec<String>,
        symbolize: bool,
        columns: Option<&[String]>,
    ) -> Result<Self, String> {
        let names = sample_name_fields();
        let with_names =
            columns.is_none_or(|cols| cols.iter().any(|c| names.iter().any(|f| f.name() == c)));
        let mut tables = TableBuilder::new(events, symbolize);
        if with_names {
            tables = tables.with_names();
        }
        let full = Arc::new(tables.samples_schema());
        let Some(cols) = columns else {
            return Ok(SampleSelection {
                tables,
                schema: full,
                order: None,
            });
        };
        let known = || -> String {
            samples_schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .chain(names.iter().map(|f| f.name().clone()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if cols.is_empty() {
            // A batch of no column has no row count in Arrow's C stream.
            return Err(format!(
                "no column asked for: name at least one, or none for all (columns: {})",
                known()
            ));
        }
        let mut asked = Vec::with_capacity(cols.len());
        for c in cols {
            let i = full
                .index_of(c)
                .map_err(|_| format!("no column `{c}` (columns: {})", known()))?;
            asked.push(i);
        }
        let schema = Arc::new(full.project(&asked).map_err(|e| e.to_string())?);
        let mut built = asked.clone();
        built.sort_unstable();
        built.dedup();
        let order = asked
            .iter()
            .map(|i| built.binary_search(i).expect("a built column"))
            .collect();
        Ok(SampleSelection {
            tables: tables.with_sample_columns(&built),
            schema,
            order: Some(order),
        })
    }

    /// The schema of every batch [`SampleSelection::stream`] hands over.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Replays `rec` and hands the samples to `send` in batches of `batch_size` rows
    /// (at least 1; the last batch may be shorter; none when there is no sample), until
    /// the end or until `send` returns `false` (the reader is gone). Memory: the batch
    /// being built, and the names of the distinct frames and stacks when a name column
    /// is built.
    pub fn stream(
        self,
        rec: &Recording,
        opts: &AnalyzerOptions,
        batch_size: usize,
        send: &mut dyn FnMut(RecordBatch) -> bool,
    ) -> Result<(), Error> {
        let SampleSelection { tables, order, .. } = self;
        let batch_size = batch_size.max(1);
        let mut tables = tables.with_batch_rows(batch_size);
        let arrange = |b: RecordBatch| -> Result<RecordBatch, Error> {
            match &order {
                Some(o) => b.project(o).map_err(|e| Error::other(e.to_string())),
                None => Ok(b),
            }
        };
        let mut a = Analyzer::open(rec, opts)?;
        let mut open = true;
        a.run(&mut |machine, item| {
            tables.add(machine, item)?;
            if item.sample.is_none() {
                return Ok(true);
            }
            if let Some(b) = tables.take(TableKind::Samples, batch_size)? {
                if !send(arrange(b)?) {
                    open = false;
                    return Ok(false);
                }
            }
            // The other tables are not streamed: their rows are dropped (the names the
            // samples' columns need are kept by the builder).
            for t in [
                TableKind::Frames,
                TableKind::Stacks,
                TableKind::StackFrames,
                TableKind::Comms,
                TableKind::Mmaps,
            ] {
                tables.take(t, BATCH)?;
            }
            Ok(true)
        })?;
        if open {
            if let Some(b) = tables.take(TableKind::Samples, 0)? {
                if b.num_rows() > 0 {
                    send(arrange(b)?);
                }
            }
        }
        Ok(())
    }
}
