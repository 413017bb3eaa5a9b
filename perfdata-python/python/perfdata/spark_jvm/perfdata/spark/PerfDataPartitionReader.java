package perfdata.spark;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One partition's rows: the feeder's Arrow batches, each column wrapped as Spark's
 * {@link ArrowColumnVector} (no copy), and {@code path} as a constant column.
 */
final class PerfDataPartitionReader implements PartitionReader<ColumnarBatch> {
  private final PerfDataPartition partition;
  private final String python;
  private final Process process;
  private final File err;
  private final BufferAllocator allocator;
  private final ArrowStreamReader reader;
  /** Where each column of the schema comes from: the feeder's column, or -1 for path. */
  private final int[] source;
  private ColumnarBatch current;
  private boolean ended;

  PerfDataPartitionReader(PerfDataPartition partition, StructType schema, Options options) {
    this.partition = partition;
    this.python = options.python;
    List<String> wanted = new ArrayList<>();
    source = new int[schema.fields().length];
    for (int i = 0; i < source.length; i++) {
      String name = schema.fields()[i].name();
      if (name.equals("path")) {
        source[i] = -1;
      } else {
        source[i] = wanted.size();
        wanted.add(name);
      }
    }
    try {
      err = File.createTempFile("perfdata-feed", ".err");
    } catch (IOException e) {
      throw new UncheckedIOException("perfdata: no temporary file for the feeder's errors", e);
    }
    try {
      process = Feeder.start(python, "read", options.readRequest(partition, wanted), err);
    } catch (IOException e) {
      err.delete();
      throw new IllegalStateException("perfdata: cannot start " + python + " -m perfdata._spark_feed", e);
    }
    allocator = new RootAllocator(Long.MAX_VALUE);
    reader = new ArrowStreamReader(process.getInputStream(), allocator);
  }

  @Override
  public boolean next() throws IOException {
    if (ended) {
      return false;
    }
    boolean more;
    try {
      more = reader.loadNextBatch();
    } catch (IOException e) {
      // The stream broke off: the feeder's own words say why.
      throw new IOException(failed(), e);
    }
    if (!more) {
      ended = true;
      try {
        int status = process.waitFor();
        if (status != 0) {
          throw new IOException(Feeder.failure(python, status, err));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("perfdata: interrupted waiting for the feeder", e);
      }
      return false;
    }
    VectorSchemaRoot root = reader.getVectorSchemaRoot();
    int rows = root.getRowCount();
    ColumnVector[] columns = new ColumnVector[source.length];
    for (int i = 0; i < source.length; i++) {
      if (source[i] < 0) {
        ConstantColumnVector path = new ConstantColumnVector(rows, DataTypes.StringType);
        path.setUtf8String(UTF8String.fromString(partition.path));
        columns[i] = path;
      } else {
        columns[i] = new ArrowColumnVector(root.getVector(source[i]));
      }
    }
    current = new ColumnarBatch(columns, rows);
    return true;
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  /** The feeder's failure, once it has exited (it is killed if it has not in 10 s). */
  private String failed() {
    try {
      if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return "perfdata: the feeder's stream of " + partition.path + " broke off";
      }
      return Feeder.failure(python, process.exitValue(), err);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "perfdata: interrupted waiting for the feeder";
    }
  }

  @Override
  public void close() throws IOException {
    try {
      // Closing the stream stops a feeder still writing (a LIMIT was met).
      reader.close();
      allocator.close();
    } finally {
      process.destroy();
      err.delete();
    }
  }
}
