package lakecert.delta;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.delta.storage.HDFSLogStore;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.SparkContext;

/**
 * Delta's stock LogStore for local and HDFS paths, with one seam for lakecert's conflict checks:
 * the first write of a commit file {@code _delta_log/<version>.json} by a writer the harness armed
 * waits until the harness releases it. The writer is the Spark local property
 * {@value #WRITER_PROPERTY} of the thread that commits (PySpark pins one JVM thread per Python
 * thread). Every attempt of an armed writer is recorded with its outcome, so the harness learns
 * which version it got from what the store did, not from what the engine reports.
 */
public class HeldLogStore extends HDFSLogStore {
  public static final String WRITER_PROPERTY = "lakecert.writer";
  private static final Pattern COMMIT = Pattern.compile("^(\\d{20})\\.json$");
  // A hang guard only: the harness releases or disarms long before.
  private static final long PARK_LIMIT_MINUTES = 30;
  private static final Map<String, Gate> GATES = new ConcurrentHashMap<>();
  // On a local file system the stock store's put-if-absent is an existence check then a rename
  // (rename(2) replaces silently), so Delta guards it with an in-JVM commit lock around the whole
  // commit. The harness turns that lock off (it would keep a second writer from ever reaching its
  // parked write); this lock guards only the check and rename, after the park.
  private static final Object PUT_IF_ABSENT = new Object();

  /** One armed writer: parks once, then records its attempts. */
  private static final class Gate {
    final CountDownLatch parked = new CountDownLatch(1);
    final CountDownLatch released = new CountDownLatch(1);
    final List<String> attempts = new ArrayList<>();
    boolean used;
  }

  public HeldLogStore(Configuration hadoopConf) {
    super(hadoopConf);
  }

  /** Arm {@code writer}: its next commit-file write parks; earlier records are dropped. */
  public static void arm(String writer) {
    Gate old = GATES.put(writer, new Gate());
    if (old != null) {
      old.released.countDown();
    }
  }

  /** True once {@code writer} is parked at its commit-file write (waits at most {@code millis}). */
  public static boolean awaitParked(String writer, long millis) throws InterruptedException {
    Gate gate = GATES.get(writer);
    return gate != null && gate.parked.await(millis, TimeUnit.MILLISECONDS);
  }

  /** Let {@code writer}'s parked write (or its next one) go through. */
  public static void release(String writer) {
    Gate gate = GATES.get(writer);
    if (gate != null) {
      gate.released.countDown();
    }
  }

  /** Release every writer (the end of a run). */
  public static void releaseAll() {
    GATES.values().forEach(g -> g.released.countDown());
  }

  /** {@code writer}'s commit-file attempts since it was armed, e.g. "3:exists,4:written". */
  public static String attempts(String writer) {
    Gate gate = GATES.get(writer);
    if (gate == null) {
      return "";
    }
    synchronized (gate) {
      return String.join(",", gate.attempts);
    }
  }

  private static String currentWriter() {
    return SparkContext.getOrCreate().getLocalProperty(WRITER_PROPERTY);
  }

  @Override
  public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
      throws IOException {
    Matcher commit = COMMIT.matcher(path.getName());
    String writer = overwrite || !commit.matches() ? null : currentWriter();
    Gate gate = writer == null ? null : GATES.get(writer);
    if (gate == null) {
      putIfAbsent(path, actions, overwrite, hadoopConf);
      return;
    }
    boolean park;
    synchronized (gate) {
      park = !gate.used;
      gate.used = true;
    }
    if (park) {
      gate.parked.countDown();
      try {
        gate.released.await(PARK_LIMIT_MINUTES, TimeUnit.MINUTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while held by lakecert", e);
      }
    }
    long version = Long.parseLong(commit.group(1));
    try {
      putIfAbsent(path, actions, overwrite, hadoopConf);
    } catch (FileAlreadyExistsException | org.apache.hadoop.fs.FileAlreadyExistsException e) {
      record(gate, version + ":exists");
      throw e;
    } catch (IOException | RuntimeException e) {
      record(gate, version + ":failed");
      throw e;
    }
    record(gate, version + ":written");
  }

  private void putIfAbsent(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
      throws IOException {
    if (overwrite) {
      super.write(path, actions, true, hadoopConf);
      return;
    }
    synchronized (PUT_IF_ABSENT) {
      super.write(path, actions, false, hadoopConf);
    }
  }

  private static void record(Gate gate, String attempt) {
    synchronized (gate) {
      gate.attempts.add(attempt);
    }
  }
}
