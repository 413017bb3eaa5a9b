//! The columnar export's tables as Arrow record batches, built as a recording is replayed:
//! what the Parquet export writes (`parquet`) and what the Python package streams. A
//! [`TableBuilder`] is fed every record [`Analyzer::run`] delivers; each table's rows are
//! taken out as batches whenever the caller wants them (the samples as they fill, the
//! others at the end), so memory stays bounded by the distinct stacks and frames, not by
//! the input. Schema: `docs/parquet-export.md` (version [`SCHEMA_VERSION`]).

use crate::export::tracepoints::{TracepointEvent, TracepointTable};
use crate::symbols::dso;
use crate::AnalysisError as Error;
use crate::TRUNCATED;
use crate::{Analyzer, Frame, Machine, Replayed, SampleInfo, SideEvent, Stack};
use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Int32Builder, ListBuilder, StringBuilder, UInt32Builder,
    UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};
use perfdata::types::RecordType;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The tables' layout version. 2: `samples.comm`; `frames.dso_name`, `symbol`,
/// `folded_name`, `address_hex`; `stack_frames`; `threads` one row per thread (its
/// names in `comms`), every COMM record in `comms`; `recordings.schema_version`. 3: the
/// tracepoint events' tables (`tracepoints/SYSTEM__EVENT`).
pub const SCHEMA_VERSION: u32 = 3;

/// Rows a batch holds when taken as it fills (the builders are sized for it).
pub const BATCH: usize = 1 << 16;

/// A stack met in a plain sample (nothing unwound): by its process, mode, ip and
/// callchain, as the record holds them, its ids (see [`TableBuilder::stack_ids`]).
struct PlainStack {
    hash: u64,
    pid: i32,
    kernel: bool,
    ip: u64,
    chain: Box<[u8]>,
    ids: (u64, u64),
}

impl PlainStack {
    fn hash(pid: i32, kernel: bool, ip: u64, chain: &[u8]) -> u64 {
        use std::hash::Hasher;
        let mut h = rustc_hash::FxHasher::default();
        h.write_u64(ip);
        h.write_u64(u64::from(pid as u32) << 1 | u64::from(kernel));
        h.write(chain);
        h.finish()
    }
}

/// The tables of the export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableKind {
    /// One row per sample.
    Samples,
    /// Distinct stacks: frame ids, leaf first.
    Stacks,
    /// The stacks one row per frame.
    StackFrames,
    /// Distinct frames.
    Frames,
    /// One row per thread.
    Threads,
    /// Every COMM record.
    Comms,
    /// Every MMAP/MMAP2 record.
    Mmaps,
    /// One row about the recording.
    Recordings,
}

impl TableKind {
    /// Every table, in the order the export writes them.
    pub const ALL: [TableKind; 8] = [
        TableKind::Samples,
        TableKind::Stacks,
        TableKind::StackFrames,
        TableKind::Frames,
        TableKind::Threads,
        TableKind::Comms,
        TableKind::Mmaps,
        TableKind::Recordings,
    ];

    /// The table's name (its directory in the export).
    pub fn name(self) -> &'static str {
        match self {
            TableKind::Samples => "samples",
            TableKind::Stacks => "stacks",
            TableKind::StackFrames => "stack_frames",
            TableKind::Frames => "frames",
            TableKind::Threads => "threads",
            TableKind::Comms => "comms",
            TableKind::Mmaps => "mmaps",
            TableKind::Recordings => "recordings",
        }
    }

    /// The table's columns.
    pub fn schema(self) -> Schema {
        match self {
            TableKind::Samples => samples_schema(),
            TableKind::Stacks => stacks_schema(),
            TableKind::StackFrames => stack_frames_schema(),
            TableKind::Frames => frames_schema(),
            TableKind::Threads => threads_schema(),
            TableKind::Comms => comms_schema(),
            TableKind::Mmaps => mmaps_schema(),
            TableKind::Recordings => recordings_schema(),
        }
    }
}

fn u64_field(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::UInt64, nullable)
}

fn str_field(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}

/// [`samples_schema`], followed by the name columns ([`sample_name_fields`]) when `names`:
/// every column a [`TableBuilder`] can build.
pub fn full_samples_schema(names: bool) -> Schema {
    let mut fields: Vec<Field> = samples_schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    if names {
        fields.extend(sample_name_fields());
    }
    Schema::new(fields)
}

/// The `samples` table's columns.
pub fn samples_schema() -> Schema {
    Schema::new(vec![
        str_field("event", false),
        u64_field("time", true),
        Field::new("pid", DataType::Int32, false),
        Field::new("tid", DataType::Int32, false),
        str_field("comm", false),
        Field::new("cpu", DataType::UInt32, true),
        u64_field("period", false),
        u64_field("ip", false),
        u64_field("stack_id", false),
        u64_field("leaf_frame", false),
        u64_field("addr", true),
        u64_field("id", true),
        u64_field("stream_id", true),
        u64_field("weight", true),
        u64_field("data_src", true),
        u64_field("transaction", true),
        u64_field("phys_addr", true),
        u64_field("cgroup", true),
    ])
}

/// The columns [`TableBuilder::with_names`] adds to the samples, after
/// [`samples_schema`]'s: the leaf frame's `dso_name` and `symbol` and the stack's
/// `folded_name`s, leaf first (the `frames` and `stacks` tables joined in).
pub fn sample_name_fields() -> Vec<Field> {
    vec![
        str_field("dso_name", false),
        str_field("symbol", false),
        Field::new(
            "stack",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        ),
    ]
}

fn stacks_schema() -> Schema {
    Schema::new(vec![
        u64_field("stack_id", false),
        Field::new(
            "frames",
            DataType::List(Arc::new(Field::new("item", DataType::UInt64, true))),
            false,
        ),
    ])
}

fn stack_frames_schema() -> Schema {
    Schema::new(vec![
        u64_field("stack_id", false),
        Field::new("depth", DataType::UInt32, false),
        u64_field("frame_id", false),
    ])
}

fn frames_schema() -> Schema {
    Schema::new(vec![
        u64_field("frame_id", false),
        Field::new("kernel", DataType::Boolean, false),
        u64_field("address", false),
        str_field("address_hex", false),
        str_field("dso", true),
        str_field("dso_name", false),
        u64_field("dso_offset", true),
        str_field("build_id", true),
        str_field("function", true),
        str_field("symbol", false),
        str_field("folded_name", false),
        str_field("file", true),
        Field::new("line", DataType::UInt32, true),
    ])
}

fn threads_schema() -> Schema {
    Schema::new(vec![
        Field::new("pid", DataType::Int32, false),
        Field::new("tid", DataType::Int32, false),
        str_field("comm", false),
        Field::new(
            "comms",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        ),
    ])
}

fn comms_schema() -> Schema {
    Schema::new(vec![
        Field::new("pid", DataType::Int32, false),
        Field::new("tid", DataType::Int32, false),
        str_field("comm", false),
        u64_field("time", true),
        Field::new("exec", DataType::Boolean, false),
    ])
}

fn mmaps_schema() -> Schema {
    Schema::new(vec![
        Field::new("pid", DataType::Int32, false),
        u64_field("start", false),
        u64_field("len", false),
        u64_field("pgoff", false),
        str_field("filename", false),
        str_field("build_id", true),
        Field::new("exec", DataType::Boolean, false),
        Field::new("kernel", DataType::Boolean, false),
        u64_field("time", true),
    ])
}

fn recordings_schema() -> Schema {
    Schema::new(vec![
        str_field("path", false),
        str_field("hostname", true),
        str_field("kernel", true),
        str_field("arch", true),
        str_field("perf_version", true),
        str_field("command_line", true),
        u64_field("start_time", true),
        u64_field("end_time", true),
        u64_field("samples", false),
        str_field("events", false),
        Field::new("schema_version", DataType::UInt32, false),
    ])
}

struct SampleCols {
    event: StringBuilder,
    time: UInt64Builder,
    pid: Int32Builder,
    tid: Int32Builder,
    comm: StringBuilder,
    cpu: UInt32Builder,
    period: UInt64Builder,
    ip: UInt64Builder,
    stack: UInt64Builder,
    leaf: UInt64Builder,
    extra: [UInt64Builder; 8],
    rows: usize,
    /// Rows the builders are sized for.
    capacity: usize,
}

impl SampleCols {
    /// Builders sized for a whole batch of `capacity` rows up front (no regrowth per
    /// batch; 11 MB at [`BATCH`] rows, so a reader of small batches asks for less).
    fn new(capacity: usize) -> Self {
        let u = || UInt64Builder::with_capacity(capacity);
        SampleCols {
            event: StringBuilder::with_capacity(capacity, capacity * 16),
            time: u(),
            pid: Int32Builder::with_capacity(capacity),
            tid: Int32Builder::with_capacity(capacity),
            comm: StringBuilder::with_capacity(capacity, capacity * 16),
            cpu: UInt32Builder::with_capacity(capacity),
            period: u(),
            ip: u(),
            stack: u(),
            leaf: u(),
            extra: std::array::from_fn(|_| u()),
            rows: 0,
            capacity,
        }
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        let mut done = std::mem::replace(self, SampleCols::new(self.capacity));
        done.finish_into()
    }

    fn finish_into(&mut self) -> Vec<ArrayRef> {
        self.rows = 0;
        let mut v: Vec<ArrayRef> = vec![
            Arc::new(self.event.finish()),
            Arc::new(self.time.finish()),
            Arc::new(self.pid.finish()),
            Arc::new(self.tid.finish()),
            Arc::new(self.comm.finish()),
            Arc::new(self.cpu.finish()),
            Arc::new(self.period.finish()),
            Arc::new(self.ip.finish()),
            Arc::new(self.stack.finish()),
            Arc::new(self.leaf.finish()),
        ];
        for b in &mut self.extra {
            v.push(Arc::new(b.finish()));
        }
        v
    }
}

#[derive(Default)]
struct FrameCols {
    id: UInt64Builder,
    kernel: BooleanBuilder,
    address: UInt64Builder,
    address_hex: StringBuilder,
    dso: StringBuilder,
    dso_name: StringBuilder,
    offset: UInt64Builder,
    build_id: StringBuilder,
    function: StringBuilder,
    symbol: StringBuilder,
    folded_name: StringBuilder,
    file: StringBuilder,
    line: UInt32Builder,
    rows: usize,
}

impl FrameCols {
    fn finish(&mut self) -> Vec<ArrayRef> {
        self.rows = 0;
        vec![
            Arc::new(self.id.finish()),
            Arc::new(self.kernel.finish()),
            Arc::new(self.address.finish()),
            Arc::new(self.address_hex.finish()),
            Arc::new(self.dso.finish()),
            Arc::new(self.dso_name.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(self.build_id.finish()),
            Arc::new(self.function.finish()),
            Arc::new(self.symbol.finish()),
            Arc::new(self.folded_name.finish()),
            Arc::new(self.file.finish()),
            Arc::new(self.line.finish()),
        ]
    }
}

/// The [`TableBuilder::with_names`] columns of the samples, and what they are made from.
#[derive(Default)]
struct NameCols {
    dso_name: StringBuilder,
    symbol: StringBuilder,
    stack: ListBuilder<StringBuilder>,
    /// Per frame id: its `dso_name`, `symbol` and `folded_name`.
    frames: Vec<[String; 3]>,
    /// Per stack id: its frame ids, leaf first.
    stacks: Vec<Vec<u64>>,
}

/// Frame identity: kernel or not, the object plus offset (or the bare address), and
/// whether it is the `[truncated]` end of a stack cut short. The same in every builder fed
/// the same recording: object ids are given as the side band is replayed.
pub(crate) type FrameKey = (bool, Option<dso::DsoId>, u64, bool);

/// The frames and stacks a builder met first since it was last asked
/// ([`TableBuilder::take_new_ids`]), in id order: what merging the ids of builders that
/// were each fed a part of one recording's samples needs.
#[derive(Default)]
pub(crate) struct NewIds {
    /// Each new frame's identity; the first has the id after the last one handed over.
    pub(crate) frames: Vec<FrameKey>,
    /// Each new stack's frame ids, leaf first; numbered on from the last handed over.
    pub(crate) stacks: Vec<Vec<u64>>,
}

/// The export's tables of one recording, built as it is replayed: feed it every record
/// [`Analyzer::run`] delivers ([`TableBuilder::add`]) and take the rows out as batches
/// ([`TableBuilder::take`]).
pub struct TableBuilder {
    events: Vec<String>,
    symbolize: bool,
    s: SampleCols,
    names_cols: Option<NameCols>,
    f: FrameCols,
    stack_rows: (UInt64Builder, ListBuilder<UInt64Builder>, usize),
    /// stack_frames: (stack_id, depth, frame_id), one row per frame of each stack.
    stack_frame_rows: (UInt64Builder, UInt32Builder, UInt64Builder, usize),
    /// Each thread's names in order (COMM records, and the name a sample saw).
    names: std::collections::BTreeMap<(i32, i32), Vec<String>>,
    comm_rows: (
        Int32Builder,
        Int32Builder,
        StringBuilder,
        UInt64Builder,
        BooleanBuilder,
    ),
    mmap_rows: (
        Int32Builder,
        UInt64Builder,
        UInt64Builder,
        UInt64Builder,
        StringBuilder,
        StringBuilder,
        BooleanBuilder,
        BooleanBuilder,
        UInt64Builder,
    ),
    frame_ids: FxHashMap<FrameKey, u64>,
    stack_ids: FxHashMap<Vec<u64>, u64>,
    frames: Vec<Frame>,
    stack: Stack,
    chain: Vec<u64>,
    raw_key: Vec<u64>,
    resolved: FxHashMap<Vec<u64>, (u64, u64)>,
    plain: hashbrown::HashTable<PlainStack>,
    samples: u64,
    first: Option<u64>,
    last: Option<u64>,
    /// Which of the samples' columns are built, by index in the unprojected
    /// [`TableBuilder::samples_schema`] (`None`: all).
    keep: Option<Vec<bool>>,
    /// The frames and stacks met since [`TableBuilder::take_new_ids`], when asked to keep
    /// them ([`TableBuilder::with_new_ids`]).
    new_ids: Option<NewIds>,
    /// The tracepoint events' tables ([`TableBuilder::with_tracepoints`]), and which of
    /// them each event (by attr index) fills.
    tracepoints: Vec<TracepointTable>,
    tracepoint_of: Vec<Option<usize>>,
}

/// Indices of the samples' columns in [`samples_schema`], then [`sample_name_fields`].
mod col {
    pub const EVENT: usize = 0;
    pub const TIME: usize = 1;
    pub const PID: usize = 2;
    pub const TID: usize = 3;
    pub const COMM: usize = 4;
    pub const CPU: usize = 5;
    pub const PERIOD: usize = 6;
    pub const IP: usize = 7;
    pub const STACK: usize = 8;
    pub const LEAF: usize = 9;
    pub const EXTRA: usize = 10;
    pub const NAMES: usize = 18;
}

impl TableBuilder {
    /// A builder for a recording whose events are named `events` (by attr index, as
    /// [`Analyzer::events`]); `symbolize`: frames get their function, source file and line
    /// (the analyzer should then read symbols and lines).
    pub fn new(events: Vec<String>, symbolize: bool) -> Self {
        TableBuilder {
            events,
            symbolize,
            s: SampleCols::new(BATCH),
            names_cols: None,
            f: FrameCols::default(),
            stack_rows: (
                UInt64Builder::new(),
                ListBuilder::new(UInt64Builder::new()),
                0,
            ),
            stack_frame_rows: (
                UInt64Builder::new(),
                UInt32Builder::new(),
                UInt64Builder::new(),
                0,
            ),
            names: Default::default(),
            comm_rows: Default::default(),
            mmap_rows: Default::default(),
            frame_ids: FxHashMap::default(),
            stack_ids: FxHashMap::default(),
            frames: vec![],
            stack: Stack::default(),
            chain: vec![],
            raw_key: vec![],
            resolved: FxHashMap::default(),
            plain: hashbrown::HashTable::new(),
            samples: 0,
            first: None,
            last: None,
            keep: None,
            new_ids: None,
            tracepoints: vec![],
            tracepoint_of: vec![],
        }
    }

    /// Also builds a table of each of these tracepoint events' samples (their payloads
    /// by field: [`crate::export::tracepoints`]), taken with
    /// [`TableBuilder::take_tracepoints`].
    pub fn with_tracepoints(mut self, events: Vec<TracepointEvent>) -> Self {
        for ev in events {
            if self.tracepoint_of.len() <= ev.event {
                self.tracepoint_of.resize(ev.event + 1, None);
            }
            self.tracepoint_of[ev.event] = Some(self.tracepoints.len());
            self.tracepoints.push(TracepointTable::new(ev));
        }
        self
    }

    /// The tracepoint tables build only these columns of their schemas (indices in
    /// [`crate::export::tracepoints::tracepoint_schema`], ascending), in that order.
    pub fn with_tracepoint_columns(mut self, built: &[usize]) -> Self {
        self.tracepoints = std::mem::take(&mut self.tracepoints)
            .into_iter()
            .map(|t| t.with_columns(built))
            .collect();
        self
    }

    /// The tracepoint tables being built, in the order given.
    pub fn tracepoint_tables(&self) -> &[TracepointTable] {
        &self.tracepoints
    }

    /// Which tracepoint table (its index, as [`TableBuilder::take_tracepoints`] takes it)
    /// the samples of event `event` (an attr index) go to.
    pub fn tracepoint_table_of(&self, event: usize) -> Option<usize> {
        self.tracepoint_of.get(event).copied().flatten()
    }

    /// The rows of the `i`-th tracepoint table ([`TableBuilder::with_tracepoints`]'s
    /// order) held so far, as [`TableBuilder::take`] takes a table's.
    pub fn take_tracepoints(
        &mut self,
        i: usize,
        at_least: usize,
    ) -> Result<Option<RecordBatch>, Error> {
        match self.tracepoints.get_mut(i) {
            Some(t) => t.take(at_least),
            None => Ok(None),
        }
    }

    /// Keeps the frames and stacks met first, for [`TableBuilder::take_new_ids`].
    pub(crate) fn with_new_ids(mut self) -> Self {
        self.new_ids = Some(NewIds::default());
        self
    }

    /// The frames and stacks met first since the last call (none unless
    /// [`TableBuilder::with_new_ids`]).
    pub(crate) fn take_new_ids(&mut self) -> NewIds {
        self.new_ids
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The samples' builders sized for batches of `rows` rows (at most [`BATCH`], the
    /// default): for a reader that takes them [`TableBuilder::take`]n at that size.
    pub fn with_batch_rows(mut self, rows: usize) -> Self {
        self.s = SampleCols::new(rows.clamp(1, BATCH));
        self
    }

    /// Builds only these of the samples' columns (indices in
    /// [`TableBuilder::samples_schema`] as it is before this call), in schema order: the
    /// others cost nothing per sample, and the stacks are not resolved unless a stack or
    /// name column is kept (the frames, stacks and threads tables are then incomplete:
    /// for a reader of the samples alone).
    pub fn with_sample_columns(mut self, columns: &[usize]) -> Self {
        let mut keep = vec![false; self.samples_schema().fields().len()];
        for &c in columns {
            if let Some(k) = keep.get_mut(c) {
                *k = true;
            }
        }
        self.keep = Some(keep);
        self
    }

    /// Whether the samples' column `i` is built.
    fn kept(keep: Option<&[bool]>, i: usize) -> bool {
        keep.is_none_or(|k| k.get(i).copied().unwrap_or(false))
    }

    /// The samples also get the columns of [`sample_name_fields`] (the leaf frame's names
    /// and the stack's, so that a reader of the samples alone sees the functions). Their
    /// frames' and stacks' names are kept in memory (as many as distinct frames and
    /// stacks).
    pub fn with_names(mut self) -> Self {
        self.names_cols = Some(NameCols::default());
        self
    }

    /// The schema of the samples' batches: [`samples_schema`], plus
    /// [`sample_name_fields`] with [`TableBuilder::with_names`].
    pub fn samples_schema(&self) -> Schema {
        let full = full_samples_schema(self.names_cols.is_some());
        let Some(keep) = &self.keep else {
            return full;
        };
        let kept: Vec<FieldRef> = full
            .fields()
            .iter()
            .zip(keep)
            .filter(|&(_, &k)| k)
            .map(|(f, _)| f.clone())
            .collect();
        Schema::new(kept)
    }

    /// Samples added so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Distinct stacks so far.
    pub fn stacks(&self) -> u64 {
        self.stack_ids.len() as u64
    }

    /// Distinct frames so far.
    pub fn frames(&self) -> u64 {
        self.frame_ids.len() as u64
    }

    /// The first and last non-zero record timestamps seen so far.
    pub fn time_span(&self) -> (Option<u64>, Option<u64>) {
        (self.first, self.last)
    }

    /// Adds what one replayed record gives: a sample row (with the stacks and frames it
    /// is the first to use), a COMM or an MMAP row.
    pub fn add(&mut self, machine: &Machine, item: &Replayed<'_>) -> Result<(), Error> {
        if let Some(t) = item.time.filter(|&t| t != 0) {
            self.first = Some(self.first.map_or(t, |x| x.min(t)));
            self.last = Some(self.last.map_or(t, |x| x.max(t)));
        }
        let Some(smp) = &item.sample else {
            return self.side_band(machine, item);
        };
        let tracepoint = self.tracepoint_of.get(smp.event).copied().flatten();
        let need_stack = {
            let keep = self.keep.as_deref();
            let kept = |i| Self::kept(keep, i);
            let mut names = col::NAMES..col::NAMES + 3;
            kept(col::STACK)
                || kept(col::LEAF)
                || (self.names_cols.is_some() && names.any(kept))
                || tracepoint.is_some_and(|t| self.tracepoints[t].builds_stack())
        };
        let (stack_id, leaf_id) = if need_stack {
            self.stack_ids(machine, smp)?
        } else {
            (0, 0)
        };
        if let Some(t) = tracepoint {
            let raw = smp.view.raw()?;
            let raw: &[u8] = raw.as_ref().map_or(&[], |r| &r.data);
            let table = &mut self.tracepoints[t];
            let comm = if table.builds_comm() {
                machine.comm(smp.tid)
            } else {
                "".into()
            };
            table.add(smp, &comm, stack_id, raw, smp.endian);
        }
        let keep = self.keep.as_deref();
        let kept = |i| Self::kept(keep, i);
        let s = &mut self.s;
        let v = &smp.view;
        if kept(col::EVENT) {
            s.event
                .append_value(self.events.get(smp.event).map_or("", String::as_str));
        }
        if kept(col::TIME) {
            s.time.append_option(smp.time);
        }
        if kept(col::PID) {
            s.pid.append_value(smp.pid);
        }
        if kept(col::TID) {
            s.tid.append_value(smp.tid);
        }
        if kept(col::COMM) {
            let comm = machine.comm(smp.tid);
            let seen = self.names.entry((smp.pid, smp.tid)).or_default();
            if seen.last().map(String::as_str) != Some(&*comm) {
                seen.push(comm.to_string());
            }
            s.comm.append_value(&*comm);
        }
        if kept(col::CPU) {
            s.cpu.append_option(smp.cpu);
        }
        if kept(col::PERIOD) {
            s.period.append_value(smp.period);
        }
        if kept(col::IP) {
            s.ip.append_value(smp.ip);
        }
        if kept(col::STACK) {
            s.stack.append_value(stack_id);
        }
        if kept(col::LEAF) {
            s.leaf.append_value(leaf_id);
        }
        if (col::EXTRA..col::NAMES).any(kept) {
            let extra = [
                v.addr(),
                v.id(),
                v.stream_id(),
                v.weight()?,
                v.data_src()?.map(|d| d.0),
                v.transaction()?.map(|t| t.0),
                v.phys_addr()?,
                v.cgroup()?,
            ];
            for (i, (b, x)) in s.extra.iter_mut().zip(extra).enumerate() {
                if kept(col::EXTRA + i) {
                    b.append_option(x);
                }
            }
        }
        if let Some(n) = self.names_cols.as_mut() {
            if kept(col::NAMES) || kept(col::NAMES + 1) {
                let [dso_name, symbol, _] = &n.frames[leaf_id as usize];
                if kept(col::NAMES) {
                    n.dso_name.append_value(dso_name);
                }
                if kept(col::NAMES + 1) {
                    n.symbol.append_value(symbol);
                }
            }
            if kept(col::NAMES + 2) {
                for &frame in &n.stacks[stack_id as usize] {
                    n.stack.values().append_value(&n.frames[frame as usize][2]);
                }
                n.stack.append(true);
            }
        }
        s.rows += 1;
        self.samples += 1;
        Ok(())
    }

    /// The sample's stack and leaf frame ids, adding the frames and the stack (rows of
    /// their tables) the first time they are met.
    fn stack_ids(&mut self, machine: &Machine, smp: &SampleInfo<'_>) -> Result<(u64, u64), Error> {
        let symbolize = self.symbolize;
        // The same raw stack in the same process resolves to the same ids until a side-band
        // record changes the maps: most samples skip the resolution. Nothing to unwind
        // (no user registers, no user frames given): the stack is a function of the
        // callchain's words, the ip and the mode, so a sample met before is found by
        // them, as the record holds them, before its stack is built. (A sample without a
        // callchain keeps the keys below: through this cache, the export of a tracepoint
        // recording, none of whose samples has one, measured a tenth slower.)
        let plain = if smp.user_callchain.is_none() && smp.regs_user_mask == 0 {
            match smp.view.callchain()?.map(|c| c.ips) {
                Some(perfdata::rt::Array::Borrowed { bytes, .. }) => Some(bytes),
                _ => None,
            }
        } else {
            None
        };
        let plain =
            plain.map(|chain| (PlainStack::hash(smp.pid, smp.kernel, smp.ip, chain), chain));
        if let Some((hash, chain)) = plain {
            let found = self.plain.find(hash, |e| {
                e.ip == smp.ip && e.pid == smp.pid && e.kernel == smp.kernel && *e.chain == *chain
            });
            if let Some(e) = found {
                return Ok(e.ids);
            }
        }
        machine.stack(smp, &mut self.stack)?;
        // Other stacks are keyed by what unwinding gave (a plain one was not found above:
        // it is resolved, and kept there only).
        let raw_key = &mut self.raw_key;
        raw_key.clear();
        let cached = if plain.is_some() {
            None
        } else {
            raw_key.extend([
                smp.pid as u64,
                u64::from(smp.kernel),
                smp.ip,
                u64::from(self.stack.is_cut()),
            ]);
            raw_key.extend(
                self.stack
                    .addrs
                    .iter()
                    .flat_map(|&(a, k)| [a, u64::from(k)]),
            );
            self.resolved.get(raw_key.as_slice()).copied()
        };
        let (stack_id, leaf_id) = match cached {
            Some(ids) => ids,
            None => {
                machine.resolve_stack(smp.pid, &self.stack, &mut self.frames);
                let f = &mut self.f;
                let frame_ids = &mut self.frame_ids;
                let mut frame_names = self.names_cols.as_mut().map(|n| &mut n.frames);
                let mut new_frames = self.new_ids.as_mut().map(|n| &mut n.frames);
                let mut frame_id = |fr: &Frame| -> u64 {
                    let key: FrameKey = match fr.dso {
                        Some((d, off)) => (fr.kernel, Some(d), off, false),
                        None => (fr.kernel, None, fr.ip, fr.truncated),
                    };
                    if let Some(&id) = frame_ids.get(&key) {
                        return id;
                    }
                    let id = frame_ids.len() as u64;
                    frame_ids.insert(key, id);
                    if let Some(n) = new_frames.as_mut() {
                        n.push(key);
                    }
                    f.id.append_value(id);
                    f.kernel.append_value(fr.kernel);
                    f.address.append_value(fr.ip);
                    // perf report's address of an unresolved frame: map-relative.
                    let rel = fr.dso.map_or(fr.ip, |(_, o)| o);
                    let hex = format!("{rel:#018x}");
                    f.address_hex.append_value(&hex);
                    let d = fr.dso.map(|(d, _)| machine.dsos.get(d));
                    f.dso.append_option(d.map(|d| d.name.as_str()));
                    let dso_name = d.map_or("[unknown]", |d| d.short_name.as_str());
                    f.dso_name.append_value(dso_name);
                    f.offset.append_option(fr.dso.map(|(_, o)| o));
                    f.build_id
                        .append_option(d.and_then(|d| d.build_id.as_deref()).map(dso::hex));
                    let sym = fr.symbol.filter(|_| symbolize);
                    let function = if fr.truncated {
                        Some(TRUNCATED)
                    } else {
                        sym.map(|s| machine.dsos.symbol_name(s))
                    };
                    f.function.append_option(function);
                    // What `report` and `collapse` print for the frame.
                    let symbol = function.map_or(hex, str::to_string);
                    f.symbol.append_value(&symbol);
                    let unsymbolized = Frame { symbol: sym, ..*fr };
                    let folded = crate::symbols::naming::frame_name(&machine.dsos, &unsymbolized);
                    f.folded_name.append_value(&folded);
                    let line = match (sym, fr.dso) {
                        (Some(_), Some((d, off))) => {
                            let addr = machine.dsos.lookup_address(d, off);
                            machine.dsos.source_line(d, addr)
                        }
                        _ => None,
                    };
                    f.file
                        .append_option(line.as_ref().map(|(file, _)| file.as_str()));
                    f.line.append_option(line.map(|(_, l)| l));
                    f.rows += 1;
                    if let Some(n) = frame_names.as_mut() {
                        n.push([dso_name.to_string(), symbol, folded]);
                    }
                    id
                };
                self.chain.clear();
                for fr in &self.frames {
                    self.chain.push(frame_id(fr));
                }
                let leaf = machine.resolve(smp.pid, smp.kernel, smp.ip);
                let leaf_id = frame_id(&leaf);
                let stack_id = match self.stack_ids.get(&self.chain) {
                    Some(&id) => id,
                    None => {
                        let id = self.stack_ids.len() as u64;
                        self.stack_ids.insert(self.chain.clone(), id);
                        self.stack_rows.0.append_value(id);
                        self.stack_rows.1.values().append_slice(&self.chain);
                        self.stack_rows.1.append(true);
                        self.stack_rows.2 += 1;
                        for (depth, &frame) in self.chain.iter().enumerate() {
                            self.stack_frame_rows.0.append_value(id);
                            self.stack_frame_rows.1.append_value(depth as u32);
                            self.stack_frame_rows.2.append_value(frame);
                            self.stack_frame_rows.3 += 1;
                        }
                        if let Some(n) = self.names_cols.as_mut() {
                            n.stacks.push(self.chain.clone());
                        }
                        if let Some(n) = self.new_ids.as_mut() {
                            n.stacks.push(self.chain.clone());
                        }
                        id
                    }
                };
                let ids = (stack_id, leaf_id);
                match plain {
                    Some((hash, chain)) => {
                        let entry = PlainStack {
                            hash,
                            pid: smp.pid,
                            kernel: smp.kernel,
                            ip: smp.ip,
                            chain: chain.into(),
                            ids,
                        };
                        self.plain.insert_unique(hash, entry, |e| e.hash);
                    }
                    None => {
                        self.resolved.insert(self.raw_key.clone(), ids);
                    }
                }
                ids
            }
        };
        Ok((stack_id, leaf_id))
    }

    /// A record that is not a sample: the stacks' resolution is reset when the maps may
    /// have changed; COMM and MMAP records are rows.
    fn side_band(&mut self, machine: &Machine, item: &Replayed<'_>) -> Result<(), Error> {
        let ty = item.rec.record_type();
        if SideEvent::is_side_band(ty) {
            // The maps may have changed: resolve stacks afresh.
            self.resolved.clear();
            self.plain.clear();
        }
        if !matches!(ty, RecordType::COMM | RecordType::MMAP | RecordType::MMAP2) {
            return Ok(());
        }
        let body = item.decode()?;
        match SideEvent::from_record(item.rec.header.misc, &body) {
            Some(SideEvent::Comm {
                pid,
                tid,
                comm,
                exec,
            }) => {
                let seen = self.names.entry((pid, tid)).or_default();
                if seen.last() != Some(&comm) {
                    seen.push(comm.clone());
                }
                let c = &mut self.comm_rows;
                c.0.append_value(pid);
                c.1.append_value(tid);
                c.2.append_value(comm);
                c.3.append_option(item.time);
                c.4.append_value(exec);
            }
            Some(SideEvent::Mmap {
                pid,
                start,
                len,
                pgoff,
                filename,
                build_id,
                exec,
                kernel,
            }) => {
                let id = build_id
                    .as_deref()
                    .or_else(|| machine.dsos.build_id_of(&filename))
                    .map(dso::hex);
                let m = &mut self.mmap_rows;
                m.0.append_value(pid);
                m.1.append_value(start);
                m.2.append_value(len);
                m.3.append_value(pgoff);
                m.4.append_value(filename);
                m.5.append_option(id);
                m.6.append_value(exec);
                m.7.append_value(kernel);
                m.8.append_option(item.time);
            }
            _ => {}
        }
        Ok(())
    }

    /// Rows of `table` held so far (the threads' are known only at the end: none are
    /// counted; the recording's row is [`TableBuilder::recording_row`]).
    pub fn rows(&self, table: TableKind) -> usize {
        match table {
            TableKind::Samples => self.s.rows,
            TableKind::Stacks => self.stack_rows.2,
            TableKind::StackFrames => self.stack_frame_rows.3,
            TableKind::Frames => self.f.rows,
            TableKind::Comms => self.comm_rows.0.len(),
            TableKind::Mmaps => self.mmap_rows.0.len(),
            TableKind::Threads | TableKind::Recordings => 0,
        }
    }

    /// The rows of `table` held so far, as one batch, when there are at least
    /// `at_least` of them (`0`: whatever there is, possibly no row); they are not held
    /// any more. Threads: one row per thread seen so far (take them at the end).
    /// Recordings: none (see [`TableBuilder::recording_row`]).
    pub fn take(
        &mut self,
        table: TableKind,
        at_least: usize,
    ) -> Result<Option<RecordBatch>, Error> {
        if at_least > 0 && self.rows(table) < at_least {
            return Ok(None);
        }
        let columns: Vec<ArrayRef> = match table {
            TableKind::Samples => {
                let mut v = self.s.finish();
                if let Some(n) = self.names_cols.as_mut() {
                    v.push(Arc::new(n.dso_name.finish()));
                    v.push(Arc::new(n.symbol.finish()));
                    v.push(Arc::new(n.stack.finish()));
                }
                if let Some(keep) = &self.keep {
                    // The columns not kept were never appended to: left out.
                    v = v
                        .into_iter()
                        .zip(keep)
                        .filter_map(|(a, &k)| k.then_some(a))
                        .collect();
                }
                return batch(Arc::new(self.samples_schema()), v).map(Some);
            }
            TableKind::Frames => self.f.finish(),
            TableKind::Stacks => {
                self.stack_rows.2 = 0;
                vec![
                    Arc::new(self.stack_rows.0.finish()),
                    Arc::new(self.stack_rows.1.finish()),
                ]
            }
            TableKind::StackFrames => {
                self.stack_frame_rows.3 = 0;
                vec![
                    Arc::new(self.stack_frame_rows.0.finish()),
                    Arc::new(self.stack_frame_rows.1.finish()),
                    Arc::new(self.stack_frame_rows.2.finish()),
                ]
            }
            TableKind::Comms => {
                let c = &mut self.comm_rows;
                vec![
                    Arc::new(c.0.finish()),
                    Arc::new(c.1.finish()),
                    Arc::new(c.2.finish()),
                    Arc::new(c.3.finish()),
                    Arc::new(c.4.finish()),
                ]
            }
            TableKind::Mmaps => {
                let m = &mut self.mmap_rows;
                vec![
                    Arc::new(m.0.finish()),
                    Arc::new(m.1.finish()),
                    Arc::new(m.2.finish()),
                    Arc::new(m.3.finish()),
                    Arc::new(m.4.finish()),
                    Arc::new(m.5.finish()),
                    Arc::new(m.6.finish()),
                    Arc::new(m.7.finish()),
                    Arc::new(m.8.finish()),
                ]
            }
            TableKind::Threads => {
                // One row per thread: a join on (pid, tid) meets one name, the last.
                let mut rows = (
                    Int32Builder::new(),
                    Int32Builder::new(),
                    StringBuilder::new(),
                    ListBuilder::new(StringBuilder::new()),
                );
                for ((pid, tid), seen) in &self.names {
                    rows.0.append_value(*pid);
                    rows.1.append_value(*tid);
                    rows.2.append_value(seen.last().map_or("", String::as_str));
                    for n in seen {
                        rows.3.values().append_value(n);
                    }
                    rows.3.append(true);
                }
                vec![
                    Arc::new(rows.0.finish()),
                    Arc::new(rows.1.finish()),
                    Arc::new(rows.2.finish()),
                    Arc::new(rows.3.finish()),
                ]
            }
            TableKind::Recordings => return Ok(None),
        };
        batch(Arc::new(table.schema()), columns).map(Some)
    }

    /// The `recordings` table's row for the recording `analyzer` replayed into this
    /// builder, found at `path`.
    pub fn recording_row(&self, analyzer: &Analyzer<'_>, path: &str) -> Result<RecordBatch, Error> {
        let meta = recording_meta(analyzer);
        let text = |v: Option<String>| -> ArrayRef {
            let mut b = StringBuilder::new();
            b.append_option(v);
            Arc::new(b.finish())
        };
        let num = |v: Option<u64>| -> ArrayRef {
            let mut b = UInt64Builder::new();
            b.append_option(v);
            Arc::new(b.finish())
        };
        batch(
            Arc::new(recordings_schema()),
            vec![
                text(Some(path.to_string())),
                text(meta.hostname),
                text(meta.kernel),
                text(meta.arch),
                text(meta.perf_version),
                text(meta.command_line),
                num(self.first),
                num(self.last),
                num(Some(self.samples)),
                text(Some(meta.events)),
                Arc::new(arrow_array::UInt32Array::from(vec![SCHEMA_VERSION])),
            ],
        )
    }
}

fn batch(schema: SchemaRef, columns: Vec<ArrayRef>) -> Result<RecordBatch, Error> {
    Ok(RecordBatch::try_new(schema, columns)?)
}

struct Meta {
    hostname: Option<String>,
    kernel: Option<String>,
    arch: Option<String>,
    perf_version: Option<String>,
    command_line: Option<String>,
    /// `[{"name":…, "attr":{…}}, …]`
    events: String,
}

fn recording_meta(a: &Analyzer<'_>) -> Meta {
    let data = &a.data;
    let info = crate::Producer::of(data);
    let events: Vec<serde_json::Value> = data
        .session
        .attrs
        .iter()
        .zip(&a.events)
        .map(|(attr, name)| serde_json::json!({"name": name, "ids": attr.ids, "attr": attr.attr}))
        .collect();
    Meta {
        hostname: info.hostname,
        kernel: info.kernel,
        arch: info.arch,
        perf_version: info.perf_version,
        command_line: info.command_line,
        events: serde_json::Value::Array(events).to_string(),
    }
}
