//! Columnar export: recordings into Parquet tables for SQL engines (DuckDB, DataFusion,
//! Spark). Each recording is replayed once, in time order, and its rows go out in batches
//! (row groups are flushed as they fill), so memory stays bounded by the distinct stacks
//! and frames, not by the input. Layout: `DIR/TABLE/recording=N/part-0.parquet` (hive
//! partitioning: engines read `recording` from the path). Schema: `docs/parquet-export.md`
//! (version [`SCHEMA_VERSION`], in the `recordings` table and in every file's key-value
//! metadata as `perfdata.schema_version`).

use crate::export::tables::{TableBuilder, TableKind, BATCH};
use crate::export::tracepoints::{table_name, tracepoint_events, tracepoint_schema};
use crate::AnalysisError as Error;
use crate::{Analyzer, AnalyzerOptions};
use arrow_array::RecordBatch;
use arrow_schema::Schema;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Options of [`export`].
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Resolve frames to functions, source files and lines (else addresses and objects).
    pub symbolize: bool,
    /// Rows per Parquet row group.
    pub row_group_size: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            symbolize: false,
            row_group_size: 1 << 20,
        }
    }
}

impl ExportOptions {
    /// `symbols` as the analyzer of an export wants them: line tables read when it
    /// symbolizes, no symbol file read when it does not.
    pub fn analyzer_options(&self, symbols: &AnalyzerOptions) -> AnalyzerOptions {
        let mut o = symbols.clone();
        o.no_symbols |= !self.symbolize;
        o.lines |= self.symbolize;
        o
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
    /// What a reader should know of the data written: tracepoint samples shorter than
    /// their event's format (the fields past the payload are null).
    pub notes: Vec<String>,
}

pub use crate::export::tables::{samples_schema, SCHEMA_VERSION};

/// Where the export's parts go: one writer per table of each recording. [`Directory`]
/// is the layout engines read; any other sink (object storage, memory) takes the same
/// parts.
pub trait PartSink {
    /// The writer of one part.
    type Part: Write + Send;
    /// A new part for `table`'s rows of recording `recording`.
    fn create(&mut self, table: &str, recording: u32) -> Result<Self::Part, Error>;
    /// `part` is complete; the bytes it holds. The sink makes it visible.
    fn finish(&mut self, part: Self::Part) -> Result<u64, Error>;
}

/// The hive layout under a directory, `DIR/TABLE/recording=N/part-0.parquet`; each
/// file is written beside its place and renamed into place when complete, so that a
/// killed export never leaves part of a file where engines look.
#[derive(Debug, Clone)]
pub struct Directory {
    dir: PathBuf,
}

impl Directory {
    /// The parts under `dir` (created as needed).
    pub fn new(dir: impl Into<PathBuf>) -> Directory {
        Directory { dir: dir.into() }
    }
}

/// A part of a [`Directory`]: a temporary file beside its place.
pub struct DirectoryPart {
    file: std::io::BufWriter<std::fs::File>,
    tmp: tempfile::TempPath,
    path: PathBuf,
}

impl Write for DirectoryPart {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl PartSink for Directory {
    type Part = DirectoryPart;

    fn create(&mut self, table: &str, recording: u32) -> Result<DirectoryPart, Error> {
        let part_dir = self.dir.join(table).join(format!("recording={recording}"));
        let io = |e: std::io::Error| Error::io(&part_dir, e);
        std::fs::create_dir_all(&part_dir).map_err(io)?;
        let path = part_dir.join("part-0.parquet");
        let (file, tmp) = perfdata::write::temp_file_beside(&path)
            .map_err(io)?
            .into_parts();
        Ok(DirectoryPart {
            file: std::io::BufWriter::new(file),
            tmp,
            path,
        })
    }

    fn finish(&mut self, part: DirectoryPart) -> Result<u64, Error> {
        let at = |e: std::io::Error| Error::io(&part.path, e);
        let file = part.file.into_inner().map_err(|e| at(e.into_error()))?;
        file.sync_all().map_err(at)?;
        let size = file.metadata().map_err(at)?.len();
        perfdata::write::set_output_permissions(&file, &part.path).map_err(at)?;
        part.tmp.persist(&part.path).map_err(|e| at(e.error))?;
        perfdata::write::remove_stale_temp_files(&part.path);
        Ok(size)
    }
}

/// Rows handed to the Parquet writer at a time. A batch's arrays are new memory, and at
/// [`BATCH`] rows (512 KiB a column) glibc maps each afresh and the kernel zeroes it: a
/// fifth of the export's time went to page faults. At 8,192 rows (64 KiB) they come from
/// the heap, reused.
const WRITE_ROWS: usize = 8192;

/// Columns whose values are (nearly) all distinct: written without a dictionary.
const UNIQUE: [&str; 2] = ["time", "common_time"];

/// One table of one recording: an Arrow writer into its part.
struct Table<P: Write + Send> {
    writer: ArrowWriter<P>,
}

impl<P: Write + Send> Table<P> {
    fn create(
        sink: &mut impl PartSink<Part = P>,
        table: &str,
        recording: u32,
        schema: Schema,
        opts: &ExportOptions,
    ) -> Result<Self, Error> {
        let part = sink.create(table, recording)?;
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(
                ZstdLevel::try_new(1).expect("valid level"),
            ))
            .set_max_row_group_size(opts.row_group_size.max(1))
            // Pages of up to 65,536 rows (or 1 MiB), not the default 20,000: the parquet
            // crate makes a zstd context (over a megabyte, mapped and zeroed) per page.
            // (Pages bounded by bytes only held 1 MiB per column being built: 200 MB more.)
            .set_data_page_row_count_limit(BATCH)
            .set_write_batch_size(8192)
            .set_key_value_metadata(Some(vec![parquet::file::metadata::KeyValue::new(
                "perfdata.schema_version".to_string(),
                SCHEMA_VERSION.to_string(),
            )]));
        // Nanosecond times are all distinct: a dictionary of them is only work (it fills,
        // then the writer falls back to plain values).
        for f in schema
            .fields()
            .iter()
            .filter(|f| UNIQUE.contains(&f.name().as_str()))
        {
            props = props.set_column_dictionary_enabled(ColumnPath::from(f.name().as_str()), false);
        }
        let writer = ArrowWriter::try_new(part, Arc::new(schema), Some(props.build()))?;
        Ok(Table { writer })
    }

    fn write(&mut self, batch: RecordBatch) -> Result<(), Error> {
        Ok(self.writer.write(&batch)?)
    }

    /// Closes the part; its size.
    fn finish(self, sink: &mut impl PartSink<Part = P>) -> Result<u64, Error> {
        sink.finish(self.writer.into_inner()?)
    }
}

/// A table of the export that the caller fills (one an analysis computes, as
/// `sched_intervals`): its part of one recording, written batch by batch.
pub struct ExtraTable<P: Write + Send> {
    table: Table<P>,
}

impl<P: Write + Send> ExtraTable<P> {
    /// A new part of table `name` for recording `recording`, with `schema`.
    pub fn create(
        parts: &mut impl PartSink<Part = P>,
        name: &str,
        recording: u32,
        schema: Schema,
        opts: &ExportOptions,
    ) -> Result<Self, Error> {
        Ok(ExtraTable {
            table: Table::create(parts, name, recording, schema, opts)?,
        })
    }

    /// Writes rows.
    pub fn write(&mut self, batch: RecordBatch) -> Result<(), Error> {
        self.table.write(batch)
    }

    /// Closes the part and makes it visible; its size in bytes.
    pub fn finish(self, parts: &mut impl PartSink<Part = P>) -> Result<u64, Error> {
        self.table.finish(parts)
    }
}

/// Exports `analyzer`'s recording as partition `recording` of every table into `parts`
/// (open the analyzer with [`ExportOptions::analyzer_options`]).
pub fn export<S: PartSink>(
    analyzer: &mut Analyzer<'_>,
    recording: u32,
    opts: &ExportOptions,
    parts: &mut S,
) -> Result<ExportSummary, Error> {
    let a = analyzer;
    let rec = a.recording();
    let tracepoints = tracepoint_events(&a.data, &a.events);
    let mut tp_files = vec![];
    for ev in &tracepoints {
        let name = format!("tracepoints/{}", table_name(ev));
        tp_files.push(Table::create(
            parts,
            &name,
            recording,
            tracepoint_schema(ev),
            opts,
        )?);
    }
    let mut tables = TableBuilder::new(a.events.clone(), opts.symbolize)
        .with_batch_rows(WRITE_ROWS)
        .with_tracepoints(tracepoints);
    let mut files = vec![];
    for kind in TableKind::ALL {
        files.push((
            kind,
            Table::create(parts, kind.name(), recording, kind.schema(), opts)?,
        ));
    }
    // The tables that fill as samples come: written out a batch at a time.
    const STREAMED: [TableKind; 4] = [
        TableKind::Samples,
        TableKind::Frames,
        TableKind::Stacks,
        TableKind::StackFrames,
    ];
    a.run(
        crate::RunOptions::default(),
        |machine, item| -> Result<bool, crate::AnalysisError> {
            tables.add(machine, item)?;
            if item.sample.is_some() {
                for (kind, file) in files.iter_mut().filter(|(k, _)| STREAMED.contains(k)) {
                    if let Some(b) = tables.take(*kind, WRITE_ROWS)? {
                        file.write(b)?;
                    }
                }
                // Only the sample's own event's table can have grown.
                let grown = item
                    .sample
                    .as_ref()
                    .and_then(|s| tables.tracepoint_table_of(s.event));
                if let Some((i, file)) = grown.and_then(|i| Some((i, tp_files.get_mut(i)?))) {
                    if let Some(b) = tables.take_tracepoints(i, WRITE_ROWS)? {
                        file.write(b)?;
                    }
                }
            }
            Ok(true)
        },
    )?;
    for (kind, file) in &mut files {
        let rows = match kind {
            TableKind::Recordings => tables.recording_row(a, &rec.path().display().to_string())?,
            _ => tables.take(*kind, 0)?.expect("every table but recordings"),
        };
        file.write(rows)?;
    }
    for (i, file) in tp_files.iter_mut().enumerate() {
        if let Some(b) = tables.take_tracepoints(i, 0)? {
            file.write(b)?;
        }
    }
    let notes = (tables.tracepoint_tables().iter())
        .filter_map(|t| match t.short_payloads() {
            (0, _) => None,
            (n, field) => Some(format!(
                "{}: {n} sample(s) shorter than the event's format says (first field past the payload: {}); those fields are null",
                t.event().name,
                field.unwrap_or("?")
            )),
        })
        .collect();
    let mut summary = ExportSummary {
        notes,
        samples: tables.samples(),
        stacks: tables.stacks(),
        frames: tables.frames(),
        ..ExportSummary::default()
    };
    summary.input_bytes = rec.header_bytes().len() as u64
        + (0..rec.stream_paths().count())
            .map(|i| rec.stream_bytes(i).len() as u64)
            .sum::<u64>();
    for (_, t) in files {
        summary.output_bytes += t.finish(parts)?;
    }
    for t in tp_files {
        summary.output_bytes += t.finish(parts)?;
    }
    Ok(summary)
}
