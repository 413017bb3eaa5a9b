//! The samples table streamed as Arrow batches with the columns a reader asked for, in
//! the order asked (what the Python package's `Recording.samples(columns=…)` returns):
//! only those columns are built (a [`TableBuilder`] with its sample columns chosen), then
//! put in the reader's order. Here rather than in the Python crate so that the walk the
//! package runs is the one the tests and the fuzz target run.

use crate::export::tables::{
    full_samples_schema, sample_name_fields, samples_schema, FrameKey, NewIds, TableBuilder,
    TableKind,
};
use crate::export::tracepoints::{tracepoint_schema, TracepointEvent};
use crate::AnalysisError as Error;
use crate::{Analyzer, AnalyzerOptions};
use arrow_array::{RecordBatch, UInt64Array};
use arrow_schema::{Schema, SchemaRef};
use perfdata::Recording;
use rustc_hash::FxHashMap;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

/// Which sample columns, in which order, and how to build them.
pub struct SampleSelection {
    events: Vec<String>,
    symbolize: bool,
    /// Whether a name column is asked for (they are built only then).
    with_names: bool,
    /// The columns built, by index in the full schema, in schema order, each once
    /// (`None`: all).
    built: Option<Vec<usize>>,
    /// The columns of a built batch.
    built_schema: SchemaRef,
    schema: SchemaRef,
    /// For each column asked for, its index among the columns built; `None`: every
    /// column, in schema order.
    order: Option<Vec<usize>>,
    /// The table streamed: a tracepoint event's ([`SampleSelection::tracepoint`]), else
    /// the samples.
    tracepoint: Option<TracepointEvent>,
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
    ) -> Result<Self, Error> {
        let names = sample_name_fields();
        let with_names =
            columns.is_none_or(|cols| cols.iter().any(|c| names.iter().any(|f| f.name() == c)));
        let full = Arc::new(full_samples_schema(with_names));
        let mut selection = SampleSelection {
            events,
            symbolize,
            with_names,
            built: None,
            built_schema: full.clone(),
            schema: full.clone(),
            order: None,
            tracepoint: None,
        };
        let Some(cols) = columns else {
            return Ok(selection);
        };
        let known: Vec<String> = (samples_schema().fields().iter())
            .map(|f| f.name().clone())
            .chain(names.iter().map(|f| f.name().clone()))
            .collect();
        let asked = column_indices(&full, cols, &known.join(", "))?;
        selection.build_only(&full, asked)?;
        Ok(selection)
    }

    /// Builds only the columns `asked` (indices into `full`, in the order asked, maybe
    /// repeated): each is built once, then put in the asked order.
    fn build_only(&mut self, full: &Schema, asked: Vec<usize>) -> Result<(), Error> {
        let mut built = asked.clone();
        built.sort_unstable();
        built.dedup();
        let order = asked
            .iter()
            .map(|i| built.binary_search(i).expect("a built column"))
            .collect();
        self.schema = Arc::new(full.project(&asked)?);
        self.built_schema = Arc::new(full.project(&built)?);
        self.built = Some(built);
        self.order = Some(order);
        Ok(())
    }

    /// The table of a tracepoint event's samples ([`crate::export::tracepoints`]) rather
    /// than the samples: `columns` from its schema, as [`SampleSelection::new`] takes
    /// them. Its `common_stack_id`s number the stacks of the event's samples in the
    /// order they are met.
    pub fn tracepoint(
        events: Vec<String>,
        symbolize: bool,
        event: TracepointEvent,
        columns: Option<&[String]>,
    ) -> Result<Self, Error> {
        let full = Arc::new(tracepoint_schema(&event));
        let mut selection = SampleSelection {
            events,
            symbolize,
            with_names: false,
            built: None,
            built_schema: full.clone(),
            schema: full.clone(),
            order: None,
            tracepoint: Some(event),
        };
        let Some(cols) = columns else {
            return Ok(selection);
        };
        let known: Vec<&str> = full.fields().iter().map(|f| f.name().as_str()).collect();
        let asked = column_indices(&full, cols, &known.join(", "))?;
        // Only the columns asked for are built (a thread's name, a stack's id cost a
        // look-up per row).
        selection.build_only(&full, asked)?;
        Ok(selection)
    }

    /// Whether a delivered record is a row of the table streamed.
    fn is_row(&self, item: &crate::Replayed<'_>) -> bool {
        match (&item.sample, &self.tracepoint) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(s), Some(ev)) => s.event == ev.event,
        }
    }

    /// The rows of the table streamed, when there are at least `at_least` (`0`: any).
    fn take_rows(
        &self,
        tables: &mut TableBuilder,
        at_least: usize,
    ) -> Result<Option<RecordBatch>, Error> {
        match self.tracepoint {
            None => tables.take(TableKind::Samples, at_least),
            Some(_) => tables.take_tracepoints(0, at_least),
        }
    }

    /// A builder of the columns chosen.
    fn builder(&self) -> TableBuilder {
        if let Some(ev) = &self.tracepoint {
            let tables = TableBuilder::new(self.events.clone(), self.symbolize)
                .with_sample_columns(&[])
                .with_tracepoints(vec![ev.clone()]);
            return match &self.built {
                Some(built) => tables.with_tracepoint_columns(built),
                None => tables,
            };
        }
        let mut tables = TableBuilder::new(self.events.clone(), self.symbolize);
        if self.with_names {
            tables = tables.with_names();
        }
        match &self.built {
            Some(built) => tables.with_sample_columns(built),
            None => tables,
        }
    }

    /// Puts a built batch's columns in the order asked.
    fn arrange(&self, b: RecordBatch) -> Result<RecordBatch, Error> {
        match &self.order {
            Some(o) => Ok(b.project(o)?),
            None => Ok(b),
        }
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
        let batch_size = batch_size.max(1);
        let mut tables = self.builder().with_batch_rows(batch_size);
        let mut a = Analyzer::open(rec, opts)?;
        let mut open = true;
        a.run(
            crate::RunOptions::default(),
            |machine, item| -> Result<bool, crate::AnalysisError> {
                tables.add(machine, item)?;
                if !self.is_row(item) {
                    return Ok(true);
                }
                if let Some(b) = self.take_rows(&mut tables, batch_size)? {
                    drop_other_rows(&mut tables)?;
                    if !send(self.arrange(b)?) {
                        open = false;
                        return Ok(false);
                    }
                }
                Ok(true)
            },
        )?;
        if open {
            if let Some(b) = self.take_rows(&mut tables, 0)? {
                if b.num_rows() > 0 {
                    send(self.arrange(b)?);
                }
            }
        }
        Ok(())
    }

    /// [`SampleSelection::stream`] on `workers` threads: the same batches, in the same
    /// order, with the same stack and frame ids.
    ///
    /// Every worker replays the whole recording (every process and map, and every
    /// sample's place in the sequence) but builds the rows of its own chunks of the
    /// samples only: chunk `c` (of [`CHUNK_BATCHES`] batches) is worker `c % workers`'s.
    /// The calling thread hands the chunks over in order, and makes the ids of each
    /// worker's stacks and frames the ids a single walk gives them: a worker says which
    /// stacks and frames each of its batches met first, and the first to be met in the
    /// whole sequence gets the next id, as in one walk. The replay is about a third of a
    /// single walk's time (on a frame-pointer recording, addresses only), so two workers
    /// take about 0.7 of it (0.8 with the batches read into Python). Memory: each worker
    /// holds at most a chunk ahead, and its own processes, maps and symbols.
    pub fn stream_parallel(
        self,
        rec: &Recording,
        opts: &AnalyzerOptions,
        batch_size: usize,
        workers: usize,
        send: &mut dyn FnMut(RecordBatch) -> bool,
    ) -> Result<(), Error> {
        if workers <= 1 {
            return self.stream(rec, opts, batch_size, send);
        }
        let batch_size = batch_size.max(1);
        let ids = IdColumns::of(&self.built_schema, self.tracepoint.is_some());
        let this = &self;
        std::thread::scope(|scope| {
            let mut inboxes = Vec::with_capacity(workers);
            for w in 0..workers {
                // A chunk, and what the worker sends past it before it blocks.
                let (tx, rx) = sync_channel::<Part>(CHUNK_BATCHES + 1);
                inboxes.push(rx);
                let chunk = Chunking {
                    worker: w as u64,
                    workers: workers as u64,
                    rows: (batch_size as u64).saturating_mul(CHUNK_BATCHES as u64),
                };
                scope.spawn(move || {
                    let outcome = this.walk_chunks(rec, opts, batch_size, chunk, ids.any(), &tx);
                    // A closed inbox: the reader is gone, nothing to say.
                    let _ = tx.send(match outcome {
                        Ok(()) => Part::Done,
                        Err(e) => Part::Failed(e),
                    });
                });
            }
            let merged = merge(&inboxes, ids, &mut |b| match this.arrange(b) {
                Ok(b) => Ok(send(b)),
                Err(e) => Err(e),
            });
            // Dropping the inboxes stops the workers still walking (the reader is gone,
            // or one failed).
            drop(inboxes);
            merged
        })
    }

    /// One worker's walk: every record replayed, the rows of its chunks built and sent.
    fn walk_chunks(
        &self,
        rec: &Recording,
        opts: &AnalyzerOptions,
        batch_size: usize,
        chunk: Chunking,
        with_ids: bool,
        tx: &SyncSender<Part>,
    ) -> Result<(), Error> {
        let mut tables = self.builder().with_batch_rows(batch_size);
        if with_ids {
            tables = tables.with_new_ids();
        }
        let mut a = Analyzer::open(rec, opts)?;
        // Samples delivered so far (mine or not), and whether a chunk of mine is open.
        let (mut seen, mut in_mine) = (0u64, false);
        let mut open = true;
        a.run(
            crate::RunOptions::default(),
            |machine, item| -> Result<bool, crate::AnalysisError> {
                if !self.is_row(item) {
                    // Side band (the maps may change, for every worker), or a sample
                    // of another event than the tracepoint streamed.
                    tables.add(machine, item)?;
                    return Ok(true);
                }
                let mine = chunk.is_mine(seen);
                seen += 1;
                if !mine {
                    if in_mine {
                        in_mine = false;
                        open = tx.send(Part::ChunkEnd).is_ok();
                    }
                    return Ok(open);
                }
                in_mine = true;
                tables.add(machine, item)?;
                if let Some(b) = self.take_rows(&mut tables, batch_size)? {
                    drop_other_rows(&mut tables)?;
                    open = tx.send(Part::Batch(b, tables.take_new_ids())).is_ok();
                }
                Ok(open)
            },
        )?;
        if open {
            if let Some(b) = self.take_rows(&mut tables, 0)? {
                if b.num_rows() > 0 {
                    let _ = tx.send(Part::Batch(b, tables.take_new_ids()));
                }
            }
        }
        Ok(())
    }
}

/// The indices in `full` of the columns asked for, in the order asked; an empty list or
/// an unknown name is refused with the list of the `known` ones.
fn column_indices(
    full: &arrow_schema::Schema,
    cols: &[String],
    known: &str,
) -> Result<Vec<usize>, Error> {
    if cols.is_empty() {
        // A batch of no column has no row count in Arrow's C stream.
        return Err(crate::BadOption::new(
            "columns",
            format!("no column asked for: name at least one, or none for all (columns: {known})"),
        )
        .into());
    }
    cols.iter()
        .map(|c| {
            full.index_of(c).map_err(|_| {
                crate::BadOption::new("columns", format!("no column `{c}` (columns: {known})"))
                    .into()
            })
        })
        .collect()
}

/// Batches in a chunk of [`SampleSelection::stream_parallel`]: enough to make a
/// worker's switches between chunks rare, few enough to keep memory at a few batches.
pub const CHUNK_BATCHES: usize = 4;

/// Which samples a worker builds.
#[derive(Clone, Copy)]
struct Chunking {
    worker: u64,
    workers: u64,
    /// Samples in a chunk.
    rows: u64,
}

impl Chunking {
    /// Whether the sample at this place in the sequence (from 0) is in one of my chunks.
    #[inline]
    fn is_mine(self, place: u64) -> bool {
        (place / self.rows) % self.workers == self.worker
    }
}

/// What a worker sends the merging thread.
enum Part {
    /// A batch of rows, and the stacks and frames they met first.
    Batch(RecordBatch, NewIds),
    /// The worker's current chunk is complete (the next sample is another's).
    ChunkEnd,
    /// The walk ended: the worker's last chunk is complete.
    Done,
    /// The walk stopped at a damaged record.
    Failed(Error),
}

/// Where the id columns are in a built batch.
#[derive(Clone, Copy)]
struct IdColumns {
    stack: Option<usize>,
    leaf: Option<usize>,
}

impl IdColumns {
    /// The id columns of the samples' `schema`, or of a tracepoint table's.
    fn of(schema: &arrow_schema::Schema, tracepoint: bool) -> Self {
        if tracepoint {
            return IdColumns {
                stack: schema.index_of("common_stack_id").ok(),
                leaf: None,
            };
        }
        IdColumns {
            stack: schema.index_of("stack_id").ok(),
            leaf: schema.index_of("leaf_frame").ok(),
        }
    }

    fn any(self) -> bool {
        self.stack.is_some() || self.leaf.is_some()
    }
}

/// The ids a single walk gives, from the ids each worker gave.
#[derive(Default)]
struct IdMerge {
    frames: FxHashMap<FrameKey, u64>,
    stacks: FxHashMap<Vec<u64>, u64>,
    /// Per worker: its frame ids' and stack ids' merged ids.
    frame_ids: Vec<Vec<u64>>,
    stack_ids: Vec<Vec<u64>>,
}

impl IdMerge {
    /// Takes in what a batch of `worker`'s met first. Whatever the batch meets first in the
    /// whole sequence it also meets first among the worker's rows (the worker's earlier
    /// rows were merged before), in the same order: numbering them on here gives a single
    /// walk's ids.
    fn absorb(&mut self, worker: usize, new: NewIds) {
        let frame_ids = &mut self.frame_ids[worker];
        for key in new.frames {
            let next = self.frames.len() as u64;
            frame_ids.push(*self.frames.entry(key).or_insert(next));
        }
        for chain in new.stacks {
            let merged: Vec<u64> = chain.iter().map(|&f| frame_ids[f as usize]).collect();
            let next = self.stacks.len() as u64;
            self.stack_ids[worker].push(*self.stacks.entry(merged).or_insert(next));
        }
    }

    /// `worker`'s batch with merged ids.
    fn renumber(&self, worker: usize, b: RecordBatch, at: IdColumns) -> Result<RecordBatch, Error> {
        let mut columns = b.columns().to_vec();
        for (col, ids) in [
            (at.stack, &self.stack_ids[worker]),
            (at.leaf, &self.frame_ids[worker]),
        ] {
            let Some(i) = col else { continue };
            let local = columns[i]
                .as_any()
                .downcast_ref::<UInt64Array>()
                .expect("the id columns are built as UInt64");
            let merged: UInt64Array = local.iter().map(|v| v.map(|v| ids[v as usize])).collect();
            columns[i] = Arc::new(merged);
        }
        Ok(RecordBatch::try_new(b.schema(), columns)?)
    }
}

/// Hands the workers' batches to `send` chunk by chunk, in order, with merged ids, until
/// the end, an error, or `send` returns `false`.
fn merge(
    inboxes: &[Receiver<Part>],
    at: IdColumns,
    send: &mut dyn FnMut(RecordBatch) -> Result<bool, Error>,
) -> Result<(), Error> {
    let mut ids = IdMerge {
        frame_ids: vec![vec![]; inboxes.len()],
        stack_ids: vec![vec![]; inboxes.len()],
        ..IdMerge::default()
    };
    for w in (0..inboxes.len()).cycle() {
        loop {
            match inboxes[w].recv() {
                Ok(Part::Batch(b, new)) => {
                    let b = if at.any() {
                        ids.absorb(w, new);
                        ids.renumber(w, b, at)?
                    } else {
                        b
                    };
                    if !send(b)? {
                        return Ok(());
                    }
                }
                Ok(Part::ChunkEnd) => break,
                // The walk ended within (or right after) this chunk: no sample follows.
                Ok(Part::Done) => return Ok(()),
                Ok(Part::Failed(e)) => return Err(e),
                Err(_) => return Err(crate::AnalysisError::WorkerLost),
            }
        }
    }
    unreachable!("cycle() never ends")
}

/// Drops the rows of the tables other than the samples (they are not streamed; the
/// names the samples' columns need are kept by the builder).
fn drop_other_rows(tables: &mut TableBuilder) -> Result<(), Error> {
    for t in [
        TableKind::Frames,
        TableKind::Stacks,
        TableKind::StackFrames,
        TableKind::Comms,
        TableKind::Mmaps,
    ] {
        tables.take(t, 0)?;
    }
    Ok(())
}
