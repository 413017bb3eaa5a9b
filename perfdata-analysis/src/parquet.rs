//! Columnar export: recordings into Parquet tables for SQL engines (DuckDB, DataFusion,
//! Spark). Each recording is replayed once, in time order, and its rows go out in batches
//! (row groups are flushed as they fill), so memory stays bounded by the distinct stacks
//! and frames, not by the input. Layout: `DIR/TABLE/recording=N/part-0.parquet` (hive
//! partitioning: engines read `recording` from the path). Schema: `docs/parquet-export.md`
//! (version [`SCHEMA_VERSION`], in the `recordings` table and in every file's key-value
//! metadata as `perfdata.schema_version`).

use crate::tables::{TableBuilder, TableKind, BATCH};
use crate::{Analyzer, AnalyzerOptions};
use arrow_array::RecordBatch;
use arrow_schema::Schema;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use perfdata::Error;
use perfdata::Recording;
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

pub use crate::tables::{samples_schema, SCHEMA_VERSION};

/// One table of one recording: an Arrow writer into a temporary file that is renamed
/// into place when the table is complete.
struct Table {
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
        let path = part_dir.join("part-0.parquet");
        let tmp = perfdata::write::temp_file_beside(&path).map_err(io)?;
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
        let writer = ArrowWriter::try_new(file, Arc::new(schema), Some(props))
            .map_err(|e| Error::other(format!("{}: {e}", part_dir.display())))?;
        Ok(Table { writer, tmp, path })
    }

    fn write(&mut self, batch: RecordBatch) -> Result<(), Error> {
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
        perfdata::write::remove_stale_temp_files(&self.path);
        Ok(size)
    }
}

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
    let mut tables = TableBuilder::new(a.events.clone(), opts.symbolize);
    let mut files = vec![];
    for kind in TableKind::ALL {
        files.push((
            kind,
            Table::create(dir, kind.name(), recording, kind.schema(), opts)?,
        ));
    }
    // The tables that fill as samples come: written out a batch at a time.
    const STREAMED: [TableKind; 4] = [
        TableKind::Samples,
        TableKind::Frames,
        TableKind::Stacks,
        TableKind::StackFrames,
    ];
    a.run(&mut |machine, item| {
        tables.add(machine, item)?;
        if item.sample.is_some() {
            for (kind, file) in files.iter_mut().filter(|(k, _)| STREAMED.contains(k)) {
                if let Some(b) = tables.take(*kind, BATCH)? {
                    file.write(b)?;
                }
            }
        }
        Ok(true)
    })?;
    for (kind, file) in &mut files {
        let rows = match kind {
            TableKind::Recordings => tables.recording_row(&a, &path.display().to_string())?,
            _ => tables.take(*kind, 0)?.expect("every table but recordings"),
        };
        file.write(rows)?;
    }
    let mut summary = ExportSummary {
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
        summary.output_bytes += t.finish()?;
    }
    Ok(summary)
}
