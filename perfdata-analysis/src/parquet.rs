//! Columnar export: recordings into Parquet tables for SQL engines (DuckDB, DataFusion,
//! Spark). Each recording is replayed once, in time order, and its rows go out in batches
//! (row groups are flushed as they fill), so memory stays bounded by the distinct stacks
//! and frames, not by the input. Layout: `DIR/TABLE/recording=N/part-0.parquet` (hive
//! partitioning: engines read `recording` from the path). Schema: `docs/parquet-export.md`
//! (version [`SCHEMA_VERSION`], in the `recordings` table and in every file's key-value
//! metadata as `perfdata.schema_version`).

use crate::machine::TRUNCATED;
use crate::{dso, Analyzer, AnalyzerOptions, Frame, SideEvent, Stack};
use arrow_array::builder::{
    BooleanBuilder, Int32Builder, ListBuilder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use perfdata::types::RecordType;
use perfdata::Error;
use perfdata::Recording;
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Options of [`export_recording`].
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Resolve frames to functions, source files and lines (else addresses and objects).
    pub symbolize: bool,
    /// Rows per Parquet row group.
    pub row_group_size: usize,
    /// Where symbols come from.
    pub symbols: AnalyzerOptions,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            symbolize: false,
            row_group_size: 1 << 20,
            symbols: AnalyzerOptions::default(),
        }
    }
}

/// What one recording gave.
#[derive(Debug, Clone, Default)]
pub struct ExportSummary {
    /// Rows of the `samples` table: the recording's samples.
    pub samples: u64,
    /// Distinct stacks (rows of `stacks`).
    pub stacks: u64,
    /// Distinct frames (rows of `frames`).
    pub frames: u64,
    /// Bytes read: the recording's file, plus every `data.N` stream of a directory.
    pub input_bytes: u64,
    /// Bytes written: this recording's part of every table.
    pub output_bytes: u64,
}

/// The tables' layout version. 2: `samples.comm`; `frames.dso_name`, `symbol`,
/// `folded_name`, `address_hex`; `stack_frames`; `threads` one row per thread (its
/// names in `comms`), every COMM record in `comms`; `recordings.schema_version`.
pub const SCHEMA_VERSION: u32 = 2;

/// Rows buffered before they go to the writer as one batch.
const BATCH: usize = 1 << 16;

/// One table of one recording: an Arrow writer into a temporary file that is renamed
/// into place when the table is complete.
struct Table {
    schema: SchemaRef,
    writer: ArrowWriter<std::fs::File>,
    tmp: tempfile::TempPath,
    path: PathBuf,
}

impl Table {
    fn create(
        dir: &Path,
        table: &str,
        recording: u32,
        schema: Schema,
        opts: &ExportOptions,
    ) -> Result<Table, Error> {
        let part_dir = dir.join(table).join(format!("recording={recording}"));
        let io = |e: std::io::Error| Error::other(format!("{}: {e}", part_dir.display()));
        std::fs::create_dir_all(&part_dir).map_err(io)?;
        let tmp = tempfile::NamedTempFile::new_in(&part_dir).map_err(io)?;
        let (file, tmp) = tmp.into_parts();
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(
                ZstdLevel::try_new(1).expect("valid level"),
            ))
            .set_max_row_group_size(opts.row_group_size.max(1))
            .set_key_value_metadata(Some(vec![parquet::file::metadata::KeyValue::new(
                "perfdata.schema_version".to_string(),
                SCHEMA_VERSION.to_string(),
            )]))
            .build();
        let schema = Arc::new(schema);
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(|e| Error::other(format!("{}: {e}", part_dir.display())))?;
        Ok(Table {
            schema,
            writer,
            tmp,
            path: part_dir.join("part-0.parquet"),
        })
    }

    fn write(&mut self, columns: Vec<ArrayRef>) -> Result<(), Error> {
        let batch = RecordBatch::try_new(self.schema.clone(), columns)
            .map_err(|e| Error::other(format!("{}: {e}", self.path.display())))?;
        self.writer
            .write(&batch)
            .map_err(|e| Error::other(format!("{}: {e}", self.path.display())))
    }

    /// Closes the file and renames it into place; its size.
    fn finish(self) -> Result<u64, Error> {
        let at = |e: &dyn std::fmt::Display| Error::other(format!("{}: {e}", self.path.display()));
        let file = self.writer.into_inner().map_err(|e| at(&e))?;
        file.sync_all().map_err(|e| at(&e))?;
        let size = file.metadata().map_err(|e| at(&e))?.len();
        perfdata::write::set_output_permissions(&file, &self.path).map_err(|e| at(&e))?;
        self.tmp.persist(&self.path).map_err(|e| at(&e))?;
        Ok(size)
    }
}

fn u64_field(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::UInt64, nullable)
}

fn str_field(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
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
}

impl SampleCols {
    /// Builders sized for a whole batch up front (no regrowth per batch).
    fn new() -> Self {
        let u = || UInt64Builder::with_capacity(BATCH);
        SampleCols {
            event: StringBuilder::with_capacity(BATCH, BATCH * 16),
            time: u(),
            pid: Int32Builder::with_capacity(BATCH),
            tid: Int32Builder::with_capacity(BATCH),
            comm: StringBuilder::with_capacity(BATCH, BATCH * 16),
            cpu: UInt32Builder::with_capacity(BATCH),
            period: u(),
            ip: u(),
            stack: u(),
            leaf: u(),
            extra: std::array::from_fn(|_| u()),
            rows: 0,
        }
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        let mut done = std::mem::replace(self, SampleCols::new());
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

/// Frame identity: kernel or not, the object plus offset (or the bare address), and
/// whether it is the `[truncated]` end of a stack cut short.
type FrameKey = (bool, Option<dso::DsoId>, u64, bool);

/// Exports one recording as partition `recording` of every table under `dir`.
pub fn export_recording(
    path: &Path,
    recording: u32,
    dir: &Path,
    opts: &ExportOptions,
) -> Result<ExportSummary, Error> {
    let rec = Recording::open(path)?;
    let mut symbols = opts.symbols.clone();
    symbols.no_symbols |= !opts.symbolize;
    symbols.lines |= opts.symbolize;
    let mut a = Analyzer::open(&rec, &symbols)?;
    let events = a.events.clone();
    let mut samples_t = Table::create(dir, "samples", recording, samples_schema(), opts)?;
    let mut stacks_t = Table::create(dir, "stacks", recording, stacks_schema(), opts)?;
    let mut stack_frames_t =
        Table::create(dir, "stack_frames", recording, stack_frames_schema(), opts)?;
    let mut frames_t = Table::create(dir, "frames", recording, frames_schema(), opts)?;
    let mut threads_t = Table::create(dir, "threads", recording, threads_schema(), opts)?;
    let mut comms_t = Table::create(dir, "comms", recording, comms_schema(), opts)?;
    let mut mmaps_t = Table::create(dir, "mmaps", recording, mmaps_schema(), opts)?;

    let mut s = SampleCols::new();
    let mut f = FrameCols::default();
    let mut stack_rows = (
        UInt64Builder::new(),
        ListBuilder::new(UInt64Builder::new()),
        0usize,
    );
    // stack_frames: (stack_id, depth, frame_id), one row per frame of each stack.
    let mut stack_frame_rows = (
        UInt64Builder::new(),
        UInt32Builder::new(),
        UInt64Builder::new(),
        0usize,
    );
    // Each thread's names in order (COMM records, and the name a sample saw).
    let mut names: std::collections::BTreeMap<(i32, i32), Vec<String>> = Default::default();
    let mut comm_rows = (
        Int32Builder::new(),
        Int32Builder::new(),
        StringBuilder::new(),
        UInt64Builder::new(),
        BooleanBuilder::new(),
    );
    let mut mmap_rows = (
        Int32Builder::new(),
        UInt64Builder::new(),
        UInt64Builder::new(),
        UInt64Builder::new(),
        StringBuilder::new(),
        StringBuilder::new(),
        BooleanBuilder::new(),
        BooleanBuilder::new(),
        UInt64Builder::new(),
    );
    let mut frame_ids: FxHashMap<FrameKey, u64> = FxHashMap::default();
    let mut stack_ids: FxHashMap<Vec<u64>, u64> = FxHashMap::default();
    let mut frames: Vec<Frame> = vec![];
    let mut stack = Stack::default();
    let mut chain: Vec<u64> = vec![];
    let mut raw_key: Vec<u64> = vec![];
    let mut resolved: FxHashMap<Vec<u64>, (u64, u64)> = FxHashMap::default();
    let mut summary = ExportSummary::default();
    let (mut first, mut last) = (None::<u64>, None::<u64>);
    let symbolize = opts.symbolize;

    a.run(&mut |machine, item| {
        if let Some(t) = item.time.filter(|&t| t != 0) {
            first = Some(first.map_or(t, |x| x.min(t)));
            last = Some(last.map_or(t, |x| x.max(t)));
        }
        let Some(smp) = &item.sample else {
            let ty = item.rec.record_type();
            if SideEvent::is_side_band(ty) {
                // The maps may have changed: resolve stacks afresh.
                resolved.clear();
            }
            if matches!(ty, RecordType::COMM | RecordType::MMAP | RecordType::MMAP2) {
                let body = item.decode()?;
                match SideEvent::from_record(item.rec.header.misc.0, &body) {
                    Some(SideEvent::Comm {
                        pid,
                        tid,
                        comm,
                        exec,
                    }) => {
                        let seen = names.entry((pid, tid)).or_default();
                        if seen.last() != Some(&comm) {
                            seen.push(comm.clone());
                        }
                        comm_rows.0.append_value(pid);
                        comm_rows.1.append_value(tid);
                        comm_rows.2.append_value(comm);
                        comm_rows.3.append_option(item.time);
                        comm_rows.4.append_value(exec);
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
                        mmap_rows.0.append_value(pid);
                        mmap_rows.1.append_value(start);
                        mmap_rows.2.append_value(len);
                        mmap_rows.3.append_value(pgoff);
                        mmap_rows.4.append_value(filename);
                        mmap_rows.5.append_option(id);
                        mmap_rows.6.append_value(exec);
                        mmap_rows.7.append_value(kernel);
                        mmap_rows.8.append_option(item.time);
                    }
                    _ => {}
                }
            }
            return Ok(true);
        };
        // The same raw stack in the same process resolves to the same ids until a side-band
        // record changes the maps: most samples skip the resolution.
        // (Unwound stacks are keyed by what unwinding gave.)
        machine.stack(smp, &mut stack)?;
        raw_key.clear();
        raw_key.extend([
            smp.pid as u64,
            u64::from(smp.kernel),
            smp.ip,
            u64::from(stack.is_cut()),
        ]);
        raw_key.extend(stack.addrs.iter().flat_map(|&(a, k)| [a, u64::from(k)]));
        let cached = resolved.get(raw_key.as_slice()).copied();
        let (stack_id, leaf_id) = match cached {
            Some(ids) => ids,
            None => {
                machine.resolve_stack(smp.pid, &stack, &mut frames);
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
                    f.id.append_value(id);
                    f.kernel.append_value(fr.kernel);
                    f.address.append_value(fr.ip);
                    // perf report's address of an unresolved frame: map-relative.
                    let rel = fr.dso.map_or(fr.ip, |(_, o)| o);
                    f.address_hex.append_value(format!("{rel:#018x}"));
                    let d = fr.dso.map(|(d, _)| machine.dsos.get(d));
                    f.dso.append_option(d.map(|d| d.name.as_str()));
                    f.dso_name
                        .append_value(d.map_or("[unknown]", |d| d.short_name.as_str()));
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
                    match function {
                        Some(name) => f.symbol.append_value(name),
                        None => f.symbol.append_value(format!("{rel:#018x}")),
                    }
                    let unsymbolized = Frame { symbol: sym, ..*fr };
                    f.folded_name
                        .append_value(crate::collapse::frame_name(machine, &unsymbolized));
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
                    id
                };
                chain.clear();
                for fr in &frames {
                    chain.push(frame_id(fr));
                }
                let leaf = machine.resolve(smp.pid, smp.kernel, smp.ip);
                let leaf_id = frame_id(&leaf);
                let stack_id = match stack_ids.get(&chain) {
                    Some(&id) => id,
                    None => {
                        let id = stack_ids.len() as u64;
                        stack_ids.insert(chain.clone(), id);
                        stack_rows.0.append_value(id);
                        stack_rows.1.values().append_slice(&chain);
                        stack_rows.1.append(true);
                        stack_rows.2 += 1;
                        for (depth, &frame) in chain.iter().enumerate() {
                            stack_frame_rows.0.append_value(id);
                            stack_frame_rows.1.append_value(depth as u32);
                            stack_frame_rows.2.append_value(frame);
                            stack_frame_rows.3 += 1;
                        }
                        id
                    }
                };
                resolved.insert(raw_key.clone(), (stack_id, leaf_id));
                (stack_id, leaf_id)
            }
        };
        let v = &smp.view;
        s.event
            .append_value(events.get(smp.event).map_or("", String::as_str));
        s.time.append_option(smp.time);
        s.pid.append_value(smp.pid);
        s.tid.append_value(smp.tid);
        let comm = machine.comm(smp.tid);
        let seen = names.entry((smp.pid, smp.tid)).or_default();
        if seen.last().map(String::as_str) != Some(&*comm) {
            seen.push(comm.to_string());
        }
        s.comm.append_value(&*comm);
        s.cpu.append_option(smp.cpu);
        s.period.append_value(smp.period);
        s.ip.append_value(smp.ip);
        s.stack.append_value(stack_id);
        s.leaf.append_value(leaf_id);
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
        for (b, x) in s.extra.iter_mut().zip(extra) {
            b.append_option(x);
        }
        s.rows += 1;
        summary.samples += 1;
        if s.rows >= BATCH {
            samples_t.write(s.finish())?;
        }
        if f.rows >= BATCH {
            frames_t.write(f.finish())?;
        }
        if stack_rows.2 >= BATCH {
            stack_rows.2 = 0;
            stacks_t.write(vec![
                Arc::new(stack_rows.0.finish()),
                Arc::new(stack_rows.1.finish()),
            ])?;
        }
        if stack_frame_rows.3 >= BATCH {
            stack_frame_rows.3 = 0;
            stack_frames_t.write(vec![
                Arc::new(stack_frame_rows.0.finish()),
                Arc::new(stack_frame_rows.1.finish()),
                Arc::new(stack_frame_rows.2.finish()),
            ])?;
        }
        Ok(true)
    })?;
    samples_t.write(s.finish())?;
    frames_t.write(f.finish())?;
    stacks_t.write(vec![
        Arc::new(stack_rows.0.finish()),
        Arc::new(stack_rows.1.finish()),
    ])?;
    stack_frames_t.write(vec![
        Arc::new(stack_frame_rows.0.finish()),
        Arc::new(stack_frame_rows.1.finish()),
        Arc::new(stack_frame_rows.2.finish()),
    ])?;
    comms_t.write(vec![
        Arc::new(comm_rows.0.finish()),
        Arc::new(comm_rows.1.finish()),
        Arc::new(comm_rows.2.finish()),
        Arc::new(comm_rows.3.finish()),
        Arc::new(comm_rows.4.finish()),
    ])?;
    // One row per thread: a join on (pid, tid) meets one name, the last.
    let mut thread_rows = (
        Int32Builder::new(),
        Int32Builder::new(),
        StringBuilder::new(),
        ListBuilder::new(StringBuilder::new()),
    );
    for ((pid, tid), seen) in &names {
        thread_rows.0.append_value(*pid);
        thread_rows.1.append_value(*tid);
        thread_rows
            .2
            .append_value(seen.last().map_or("", String::as_str));
        for n in seen {
            thread_rows.3.values().append_value(n);
        }
        thread_rows.3.append(true);
    }
    threads_t.write(vec![
        Arc::new(thread_rows.0.finish()),
        Arc::new(thread_rows.1.finish()),
        Arc::new(thread_rows.2.finish()),
        Arc::new(thread_rows.3.finish()),
    ])?;
    mmaps_t.write(vec![
        Arc::new(mmap_rows.0.finish()),
        Arc::new(mmap_rows.1.finish()),
        Arc::new(mmap_rows.2.finish()),
        Arc::new(mmap_rows.3.finish()),
        Arc::new(mmap_rows.4.finish()),
        Arc::new(mmap_rows.5.finish()),
        Arc::new(mmap_rows.6.finish()),
        Arc::new(mmap_rows.7.finish()),
        Arc::new(mmap_rows.8.finish()),
    ])?;
    summary.stacks = stack_ids.len() as u64;
    summary.frames = frame_ids.len() as u64;

    let mut rt = Table::create(dir, "recordings", recording, recordings_schema(), opts)?;
    let meta = recording_meta(&a);
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
    rt.write(vec![
        text(Some(path.display().to_string())),
        text(meta.hostname),
        text(meta.kernel),
        text(meta.arch),
        text(meta.perf_version),
        text(meta.command_line),
        num(first),
        num(last),
        num(Some(summary.samples)),
        text(Some(meta.events)),
        Arc::new(arrow_array::UInt32Array::from(vec![SCHEMA_VERSION])),
    ])?;
    summary.input_bytes = rec.header_bytes().len() as u64
        + (0..rec.stream_paths().count())
            .map(|i| rec.stream_bytes(i).len() as u64)
            .sum::<u64>();
    for t in [
        samples_t,
        stacks_t,
        stack_frames_t,
        frames_t,
        threads_t,
        comms_t,
        mmaps_t,
        rt,
    ] {
        summary.output_bytes += t.finish()?;
    }
    Ok(summary)
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
    let mut m = Meta {
        hostname: None,
        kernel: None,
        arch: None,
        perf_version: None,
        command_line: None,
        events: String::new(),
    };
    let mut info = crate::info::Info::default();
    crate::info::describe_features(data, &mut info);
    m.hostname = info.hostname;
    m.kernel = info.kernel;
    m.arch = info.arch;
    m.perf_version = info.perf_version;
    m.command_line = info.command_line;
    let events: Vec<serde_json::Value> = data
        .session
        .attrs
        .iter()
        .zip(&a.events)
        .map(|(attr, name)| serde_json::json!({"name": name, "ids": attr.ids, "attr": attr.attr}))
        .collect();
    m.events = serde_json::Value::Array(events).to_string();
    m
}
