//! The `sched_intervals` table: [`timehist`](super::timehist)'s intervals as Arrow
//! record batches (one row per time a task ran on a CPU, with the wait and delay before
//! it and its waker), for the Parquet export and SQL: the questions the text views
//! answer, asked in a query. Schema: `docs/parquet-export.md`.

use super::timehist::{timehist, Interval, TimehistOptions};
use crate::AnalysisError as Error;
use crate::Analyzer;
use arrow_array::builder::{Int32Builder, StringBuilder, UInt32Builder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;

/// The table's name in the export.
pub const TABLE: &str = "sched_intervals";

/// The columns of `sched_intervals`.
pub fn schema() -> Schema {
    Schema::new(vec![
        Field::new("pid", DataType::Int32, false),
        Field::new("tid", DataType::Int32, false),
        Field::new("comm", DataType::Utf8, false),
        Field::new("cpu", DataType::UInt32, false),
        Field::new("start", DataType::UInt64, false),
        Field::new("end", DataType::UInt64, false),
        Field::new("run", DataType::UInt64, false),
        Field::new("wait", DataType::UInt64, false),
        Field::new("delay", DataType::UInt64, false),
        Field::new("wait_state", DataType::Utf8, true),
        Field::new("state", DataType::Utf8, false),
        Field::new("waker_pid", DataType::Int32, true),
        Field::new("waker_tid", DataType::Int32, true),
    ])
}

/// Rows gathered into a batch.
#[derive(Default)]
struct Rows {
    pid: Int32Builder,
    tid: Int32Builder,
    comm: StringBuilder,
    cpu: UInt32Builder,
    start: UInt64Builder,
    end: UInt64Builder,
    run: UInt64Builder,
    wait: UInt64Builder,
    delay: UInt64Builder,
    wait_state: StringBuilder,
    state: StringBuilder,
    waker_pid: Int32Builder,
    waker_tid: Int32Builder,
    n: usize,
}

impl Rows {
    fn push(&mut self, i: &Interval) {
        self.pid.append_value(i.pid);
        self.tid.append_value(i.tid);
        self.comm.append_value(&i.comm);
        self.cpu.append_value(i.cpu);
        self.start.append_value(i.start);
        self.end.append_value(i.end);
        self.run.append_value(i.run);
        self.wait.append_value(i.wait);
        self.delay.append_value(i.delay);
        self.wait_state
            .append_option(i.wait_state.map(|c| c.to_string()));
        self.state.append_value(i.state.to_string());
        self.waker_pid.append_option(i.waker.map(|w| w.0));
        self.waker_tid.append_option(i.waker.map(|w| w.1));
        self.n += 1;
    }

    fn take(&mut self) -> Result<RecordBatch, Error> {
        self.n = 0;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.pid.finish()),
            Arc::new(self.tid.finish()),
            Arc::new(self.comm.finish()),
            Arc::new(self.cpu.finish()),
            Arc::new(self.start.finish()),
            Arc::new(self.end.finish()),
            Arc::new(self.run.finish()),
            Arc::new(self.wait.finish()),
            Arc::new(self.delay.finish()),
            Arc::new(self.wait_state.finish()),
            Arc::new(self.state.finish()),
            Arc::new(self.waker_pid.finish()),
            Arc::new(self.waker_tid.finish()),
        ];
        Ok(RecordBatch::try_new(Arc::new(schema()), columns)?)
    }
}

/// Replays the recording and hands `sink` the `sched_intervals` rows in batches of at
/// most `batch_rows` (one empty batch when the recording has no interval), as `opts`
/// selects them (the defaults: every task and CPU); the number of rows.
pub fn intervals(
    analyzer: &mut Analyzer<'_>,
    opts: &TimehistOptions,
    batch_rows: usize,
    sink: &mut dyn FnMut(RecordBatch) -> Result<(), Error>,
) -> Result<u64, Error> {
    let mut rows = Rows::default();
    let mut total = 0u64;
    let mut failed: Option<Error> = None;
    let mut handed = 0u64;
    {
        let mut each = |i: Interval| {
            if failed.is_some() {
                return;
            }
            rows.push(&i);
            total += 1;
            if rows.n >= batch_rows.max(1) {
                match rows.take().and_then(&mut *sink) {
                    Ok(()) => handed += 1,
                    Err(e) => failed = Some(e),
                }
            }
        };
        timehist(analyzer, opts, &mut std::io::sink(), Some(&mut each))?;
    }
    if let Some(e) = failed {
        return Err(e);
    }
    if rows.n > 0 || handed == 0 {
        sink(rows.take()?)?;
    }
    Ok(total)
}
