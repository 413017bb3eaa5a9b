package perfdata.spark;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The data source's options, read once on the driver; travels with each partition. */
final class Options implements Serializable {
  private static final long serialVersionUID = 1L;

  final String python;
  final String paths;
  final String event;
  final boolean symbolize;
  final String unwind;
  final int batchSize;
  final long splitBytes;
  /** Whether {@code splitBytes} was given: then files are split whatever the cluster. */
  final boolean splitGiven;

  private Options(CaseInsensitiveStringMap o) {
    String p = o.getOrDefault("paths", o.get("path"));
    if (p == null || p.isEmpty()) {
      throw new IllegalArgumentException(
          "perfdata: load(\"recordings/*.data\") or option(\"paths\", ...)");
    }
    this.paths = p;
    this.event = o.get("event");
    String sym = o.getOrDefault("symbolize", event == null ? "true" : "false").toLowerCase();
    this.symbolize = sym.equals("true") || sym.equals("1") || sym.equals("yes");
    this.unwind = o.get("unwind");
    this.batchSize = Integer.parseInt(o.getOrDefault("batchSize", "65536"));
    this.splitGiven = o.containsKey("splitBytes");
    this.splitBytes = Long.parseLong(o.getOrDefault("splitBytes", Long.toString(256L << 20)));
    String py = o.get("python");
    if (py == null) {
      py = System.getenv("PYSPARK_PYTHON");
    }
    this.python = py == null || py.isEmpty() ? "python3" : py;
  }

  static Options of(CaseInsensitiveStringMap options) {
    return new Options(options);
  }

  Map<String, Object> schemaRequest() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("paths", paths);
    m.put("event", event);
    return m;
  }

  /**
   * The plan's request. A byte range still walks its whole file (only its samples are
   * delivered): unless {@code splitBytes} was given, files are split only when the
   * recordings are fewer than the cluster's task slots ({@code slots}).
   */
  Map<String, Object> planRequest(int slots) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("paths", paths);
    m.put("splitBytes", splitBytes);
    m.put("minPartitions", splitGiven ? null : slots);
    return m;
  }

  /** What the feeder reads for one partition: `columns` of its rows. */
  Map<String, Object> readRequest(PerfDataPartition p, List<String> columns) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("path", p.path);
    m.put("stream", p.stream);
    m.put("range", p.range == null ? null : List.of(p.range[0], p.range[1]));
    m.put("columns", columns);
    m.put("symbolize", symbolize);
    m.put("unwind", unwind);
    m.put("batchSize", batchSize);
    m.put("event", event);
    return m;
  }
}
