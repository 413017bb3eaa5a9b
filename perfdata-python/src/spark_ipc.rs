//! The samples (or a tracepoint event's table) as the JVM Spark data source reads them:
//! an Arrow IPC stream in Spark's types, written to the pipe the data source reads.
//!
//! Spark has no unsigned integers, and its Arrow column reader (`ArrowColumnVector`)
//! takes none: each unsigned column is widened as Spark reads the Parquet export's
//! (uint8 `smallint`, uint16 `int`, uint32 `bigint`, uint64 `decimal(20,0)`), a list's
//! elements alike. The Python data source widens the same way, in Python
//! (`perfdata.spark._Widening`); here it costs a pass in Rust and no interpreter.

use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use std::io::Write;
use std::sync::Arc;

/// Spark's type of a column of Arrow type `t`.
fn spark_type(t: &DataType) -> DataType {
    match t {
        DataType::UInt8 => DataType::Int16,
        DataType::UInt16 => DataType::Int32,
        DataType::UInt32 => DataType::Int64,
        DataType::UInt64 => DataType::Decimal128(20, 0),
        DataType::List(item) => DataType::List(Arc::new(spark_field(item))),
        other => other.clone(),
    }
}

fn spark_field(f: &Field) -> Field {
    Field::new(f.name(), spark_type(f.data_type()), f.is_nullable())
}

/// The stream's schema in Spark's types.
fn spark_schema(s: &Schema) -> SchemaRef {
    Arc::new(Schema::new(
        s.fields()
            .iter()
            .map(|f| spark_field(f))
            .collect::<Vec<_>>(),
    ))
}

/// `batch` in `schema`'s types (Arrow's casts: every value of an unsigned type fits the
/// wider signed or decimal type).
fn widen(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, ArrowError> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| -> Result<ArrayRef, ArrowError> {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                arrow_cast::cast(c, f.data_type())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(schema.clone(), columns)
}

/// Writes every batch of `reader`, widened, to `out` as one Arrow IPC stream (the schema
/// first, even when no batch follows); the number of rows written.
pub(crate) fn write_stream(
    reader: impl RecordBatchReader,
    out: impl Write,
) -> Result<u64, ArrowError> {
    let schema = spark_schema(&reader.schema());
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(out, &schema)?;
    let mut rows = 0u64;
    for batch in reader {
        let batch = widen(&batch?, &schema)?;
        rows += batch.num_rows() as u64;
        writer.write(&batch)?;
    }
    writer.finish()?;
    writer.into_inner()?.flush()?;
    Ok(rows)
}
