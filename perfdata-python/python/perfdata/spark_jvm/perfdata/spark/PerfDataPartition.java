package perfdata.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One partition: a recording, one stream of records of a {@code perf record --threads}
 * directory ({@code stream}), or one byte range of a large file ({@code range}); both
 * null: the whole recording.
 */
final class PerfDataPartition implements InputPartition {
  private static final long serialVersionUID = 1L;

  final String path;
  final Integer stream;
  final long[] range;

  PerfDataPartition(String path, Integer stream, long[] range) {
    this.path = path;
    this.stream = stream;
    this.range = range;
  }
}
