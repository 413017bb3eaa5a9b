package perfdata.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Readers of partitions, in columnar batches only (the Arrow batches, wrapped). */
final class PerfDataReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;

  private final StructType schema;
  private final Options options;

  PerfDataReaderFactory(StructType schema, Options options) {
    this.schema = schema;
    this.options = options;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    return new PerfDataPartitionReader((PerfDataPartition) partition, schema, options);
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("perfdata: the data source reads columnar batches only");
  }
}
