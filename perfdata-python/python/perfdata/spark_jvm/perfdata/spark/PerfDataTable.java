package perfdata.spark;

import java.util.EnumSet;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The recordings a {@code load} names, as one table of rows. */
final class PerfDataTable implements SupportsRead {
  private final StructType schema;

  PerfDataTable(StructType schema) {
    this.schema = schema;
  }

  @Override
  public String name() {
    return "perfdata";
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new PerfDataScan(schema, Options.of(options));
  }
}
