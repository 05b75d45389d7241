package lakecert.kernel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * lakecert's driver for Delta Kernel: one JSON request per line on stdin, one JSON answer per line
 * on stdout. While a request runs, every file Kernel writes, copies or deletes is announced as an
 * {@code event} line, and the driver waits for lakecert's acknowledgement before Kernel goes on, so
 * lakecert's transcript orders storage operations exactly against the catalog calls it serves.
 *
 * <p>Arguments: the catalog's base URL (the server root, without the UC API prefix) and optionally
 * a bearer token. Anything Kernel or its libraries print goes to stderr: stdout is the protocol.
 */
public final class Driver {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final BufferedReader in;
  private final PrintStream out;

  private Driver(BufferedReader in, PrintStream out) {
    this.in = in;
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: Driver BASE_URL [TOKEN [HADOOP_KEY=VALUE...]]");
      System.exit(2);
    }
    PrintStream protocol = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    System.setOut(System.err); // libraries that print must not corrupt the protocol
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    Driver driver = new Driver(in, protocol);
    String token = args.length > 1 ? args[1] : "";
    Map<String, String> hadoop = new java.util.HashMap<>();
    for (int i = 2; i < args.length; i++) { // KEY=VALUE: Hadoop settings (S3A for s3:// warehouses)
      int eq = args[i].indexOf('=');
      if (eq > 0) {
        hadoop.put(args[i].substring(0, eq), args[i].substring(eq + 1));
      }
    }
    try (KernelClient client = new KernelClient(args[0], token, hadoop, driver::announce)) {
      // The versions actually loaded, read from the jars at run time (a run's jars may be any
      // release the driver was compiled against): "kernel" is delta-kernel-api's.
      Map<String, String> components = KernelCompat.components();
      ObjectNode hello = JSON.createObjectNode().put("type", "ready");
      hello.put("kernel", components.get("delta-kernel-api"));
      ObjectNode loaded = hello.putObject("components");
      components.forEach(loaded::put);
      driver.send(hello);
      driver.serve(client);
    }
  }

  private void serve(KernelClient client) throws Exception {
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode request;
      try {
        request = JSON.readTree(line);
      } catch (Exception e) {
        send(error("invalid", e));
        continue;
      }
      if ("exit".equals(request.path("op").asText())) {
        return;
      }
      try {
        ObjectNode answer = JSON.createObjectNode().put("type", "result");
        answer.set("value", client.handle(request));
        send(answer);
      } catch (Throwable e) {
        send(error(Errors.kind(e), e));
      }
    }
  }

  private static ObjectNode error(String kind, Throwable e) {
    ObjectNode node = JSON.createObjectNode().put("type", "error").put("kind", kind);
    node.put("class", e.getClass().getName()).put("message", String.valueOf(e.getMessage()));
    ArrayNode causes = node.putArray("causes");
    for (Throwable c = e.getCause(); c != null && causes.size() < 8; c = c.getCause()) {
      causes.add(c.getClass().getName() + ": " + c.getMessage());
    }
    return node;
  }

  private synchronized void send(ObjectNode node) {
    out.println(node.toString());
    out.flush();
  }

  /** Announce one storage operation and wait until lakecert has recorded it. */
  private synchronized void announce(String op, String uri, long size, boolean ifAbsent) {
    ObjectNode node = JSON.createObjectNode().put("type", "event").put("op", op).put("uri", uri);
    node.put("size", size).put("if_absent", ifAbsent);
    send(node);
    try {
      String ack = in.readLine();
      if (ack == null) {
        throw new IllegalStateException("lakecert closed the driver's input");
      }
    } catch (java.io.IOException e) {
      throw new IllegalStateException("no acknowledgement from lakecert", e);
    }
  }

  /** Where Kernel's file operations are reported. */
  public interface Announcer {
    void announce(String op, String uri, long size, boolean ifAbsent);
  }

  static Map<String, String> noVersions() {
    return Map.of();
  }
}
