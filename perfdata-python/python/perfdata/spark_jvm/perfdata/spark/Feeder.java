package perfdata.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;

/**
 * The feeder: {@code python -m perfdata._spark_feed MODE JSON}, perfdata's native reader
 * behind a process boundary (no JNI: the same package the Python data source needs on
 * each executor). Its standard output is the answer (JSON, DDL, or an Arrow IPC stream);
 * a failure is its standard error's line and a non-zero status.
 */
final class Feeder {
  private Feeder() {}

  private static List<String> command(String python, String mode, Map<String, Object> request) {
    try {
      String json = new ObjectMapper().writeValueAsString(request);
      return List.of(python, "-m", "perfdata._spark_feed", mode, json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("perfdata: options not expressible as JSON", e);
    }
  }

  /** Runs a driver-side request to its end: its standard output. */
  static String run(String python, String mode, Map<String, Object> request) {
    File err = null;
    try {
      err = File.createTempFile("perfdata-feed", ".err");
      Process p = start(python, mode, request, err);
      byte[] out;
      try (InputStream in = p.getInputStream()) {
        out = in.readAllBytes();
      }
      int status = p.waitFor();
      if (status != 0) {
        throw new IllegalStateException(failure(python, status, err));
      }
      return new String(out, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("perfdata: cannot run " + python + " -m perfdata._spark_feed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("perfdata: interrupted waiting for the feeder", e);
    } finally {
      if (err != null) {
        err.delete();
      }
    }
  }

  /** Starts the feeder; its standard error goes to `err`. */
  static Process start(String python, String mode, Map<String, Object> request, File err)
      throws IOException {
    return new ProcessBuilder(command(python, mode, request))
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .redirectError(err)
        .start();
  }

  /** What a failed feeder said: its standard error, or its status. */
  static String failure(String python, int status, File err) {
    String said = "";
    try {
      said = Files.readString(err.toPath(), StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      // the status alone then
    }
    if (said.isEmpty()) {
      said = python + " -m perfdata._spark_feed exited with status " + status;
    }
    return said;
  }
}
