package perfdata.spark;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * {@code spark.read.format("perfdata")} in the JVM: the samples of perf.data recordings
 * (or one tracepoint event's table), read column by column from Arrow batches that
 * perfdata's native reader writes (see {@link Feeder}). Unlike the Python data source it
 * reads only the columns a query needs, and hands Spark the batches as they are.
 *
 * <p>The options are the Python data source's ({@code paths}, {@code event},
 * {@code symbolize}, {@code unwind}, {@code batchSize}, {@code splitBytes}), and
 * {@code python}: the interpreter with perfdata installed, on the driver and the
 * executors.
 */
public final class PerfDataSource implements TableProvider, DataSourceRegister {
  @Override
  public String shortName() {
    return "perfdata";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    Options o = Options.of(options);
    if (o.event == null) {
      return StructType.fromDDL(samplesSchema());
    }
    return StructType.fromDDL(Feeder.run(o.python, "schema", o.schemaRequest()).trim());
  }

  /** The samples' schema, which the jar's build put beside the classes. */
  private static String samplesSchema() {
    try (InputStream in = PerfDataSource.class.getResourceAsStream("samples-schema.ddl")) {
      if (in == null) {
        throw new IllegalStateException("perfdata: the jar lacks samples-schema.ddl; rebuild it with perfdata.spark.jar()");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public boolean supportsExternalMetadata() {
    // A schema the user gives names the columns to read, as the Python data source's.
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new PerfDataTable(schema);
  }
}
