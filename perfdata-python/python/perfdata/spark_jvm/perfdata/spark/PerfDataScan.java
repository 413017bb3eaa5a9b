package perfdata.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.types.StructType;

/**
 * The scan of a query: the columns it needs (Spark prunes the rest, so only those are
 * decoded and cross to the JVM), and one partition per recording, stream or byte range
 * as the feeder plans them on the driver.
 */
final class PerfDataScan implements ScanBuilder, SupportsPushDownRequiredColumns, Scan, Batch {
  private final Options options;
  private StructType schema;

  PerfDataScan(StructType schema, Options options) {
    this.schema = schema;
    this.options = options;
  }

  @Override
  public void pruneColumns(StructType required) {
    schema = required;
  }

  @Override
  public Scan build() {
    return this;
  }

  @Override
  public StructType readSchema() {
    return schema;
  }

  @Override
  public String description() {
    return "perfdata " + options.paths + (options.event == null ? "" : " event " + options.event);
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    int slots = SparkSession.active().sparkContext().defaultParallelism();
    String json = Feeder.run(options.python, "plan", options.planRequest(slots));
    List<InputPartition> out = new ArrayList<>();
    try {
      for (JsonNode p : new ObjectMapper().readTree(json)) {
        Integer stream = p.get("stream").isNull() ? null : p.get("stream").asInt();
        JsonNode r = p.get("range");
        long[] range = r.isNull() ? null : new long[] {r.get(0).asLong(), r.get(1).asLong()};
        out.add(new PerfDataPartition(p.get("path").asText(), stream, range));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("perfdata: the feeder's plan is not JSON: " + json, e);
    }
    return out.toArray(new InputPartition[0]);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new PerfDataReaderFactory(schema, options);
  }
}
