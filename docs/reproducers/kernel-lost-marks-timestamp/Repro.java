import io.delta.kernel.CommitRange;
import io.delta.kernel.CommitRangeBuilder.CommitBoundary;
import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.internal.files.ParsedCatalogCommitData;
import io.delta.kernel.internal.files.ParsedLogData;
import io.delta.kernel.utils.FileStatus;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;

/**
 * Time travel by timestamp on a catalog-managed table after a metadata cleanup below versions the
 * catalog still returns, by hand.
 *
 * <p>The table: catalog-managed, in-commit timestamps enabled from v0 (commit v has ICT
 * 1000*(v+1)). Published commits v0..v9 in _delta_log. The catalog still returns the ratified
 * commits v6..v12 (its publication marks were lost): staged files
 * _delta_log/_staged_commits/v.uuid.json, v6..v9 byte-identical to the published files of those versions, v10..v12 staged only. A classic
 * checkpoint at v9, written by Kernel's Snapshot.writeCheckpoint from the published v0..v9.
 *
 * <p>Four copies of that table differ only in which published delta files a metadata cleanup
 * deleted afterwards: (A) v0..v8, i.e. everything below the checkpoint v9; (B) v0..v5 only, the
 * published v6..v8 kept; (C) none; (D) v0..v5 as in B, with a second checkpoint at v6. On each,
 * with the catalog's commits as log data and 12 as the max catalog version, it loads the latest snapshot, the snapshots at versions 9..12, the snapshot at
 * the timestamp of v9 and of v11 (SnapshotBuilder.atTimestamp; once more for v9 with the log data
 * cut to v10..v12), and a commit range starting at those timestamps (CommitBoundary.atTimestamp),
 * and prints what each returns or throws.
 *
 * <p>Kernel's public API only, but for ParsedLogData/ParsedCatalogCommitData (in an internal
 * package, yet what SnapshotBuilder.withLogData takes). No lakecert code is used.
 * Usage: java -cp JARS:. Repro [BASE_DIR]
 */
public final class Repro {
  private static final long MAX_CATALOG_VERSION = 12;
  private static final String SCHEMA =
      "{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":["
          + "{\\\"name\\\":\\\"id\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}},"
          + "{\\\"name\\\":\\\"value\\\",\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}]}";

  public static void main(String[] args) throws Exception {
    Path base = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("kernel-lost-marks-");
    Engine engine = DefaultEngine.create(new Configuration());
    System.out.println("delta-kernel-api " + Snapshot.class.getPackage().getImplementationVersion());
    System.out.println("published v0..v9, catalog returns v6..v12 (staged; v6..v9 = published bytes), "
        + "checkpoint v9, ICT(v) = 1000*(v+1), max catalog version " + MAX_CATALOG_VERSION);
    run(engine, base.resolve("a"), 8, "A: cleanup deleted the published v0..v8");
    run(engine, base.resolve("b"), 5, "B: cleanup deleted the published v0..v5 (v6..v8 kept)");
    run(engine, base.resolve("c"), -1, "C: no cleanup");
    run(engine, base.resolve("d"), 5, "D: as B, plus a checkpoint at v6");
  }

  private static void run(Engine engine, Path dir, long delTo, String label)
      throws Exception {
    if (Files.exists(dir.resolve("_delta_log"))) {
      throw new IllegalArgumentException(dir + " already holds a _delta_log; give a new directory");
    }
    Path log = dir.resolve("_delta_log");
    Path staged = log.resolve("_staged_commits");
    Files.createDirectories(staged);
    String table = dir.toUri().toString();

    // Published v0..v9: v0 protocol + metadata, v1..v9 one add each.
    write(
        log.resolve(delta(0)),
        commitInfo(0),
        "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
            + "\"readerFeatures\":[\"catalogManaged\",\"vacuumProtocolCheck\"],"
            + "\"writerFeatures\":[\"catalogManaged\",\"inCommitTimestamp\",\"vacuumProtocolCheck\"]}}",
        "{\"metaData\":{\"id\":\"" + UUID.randomUUID() + "\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
            + "\"schemaString\":\"" + SCHEMA + "\",\"partitionColumns\":[],"
            + "\"configuration\":{\"delta.enableInCommitTimestamps\":\"true\"},\"createdTime\":1000}}");
    for (long v = 1; v <= 9; v++) {
      write(log.resolve(delta(v)), commitInfo(v), add(v));
    }
    // The catalog's ratified commits v6..v12 as staged files; v6..v9 copies of the published ones.
    List<ParsedLogData> catalogCommits = new ArrayList<>();
    for (long v = 6; v <= MAX_CATALOG_VERSION; v++) {
      Path file = staged.resolve(String.format("%020d.%s.json", v, UUID.randomUUID()));
      if (v <= 9) {
        Files.copy(log.resolve(delta(v)), file);
      } else {
        write(file, commitInfo(v), add(v));
      }
      String path = engine.getFileSystemClient().resolvePath(file.toUri().toString());
      catalogCommits.add(
          ParsedCatalogCommitData.forFileStatus(
              FileStatus.of(path, Files.size(file), Files.getLastModifiedTime(file).toMillis())));
    }
    // Checkpoint at v9 (and, in D, at v6), written by Kernel from the published commits (no log
    // data given, so the snapshot is built from the published files only).
    for (long v : label.startsWith("D") ? new long[] {6, 9} : new long[] {9}) {
      TableManager.loadSnapshot(table)
          .atVersion(v)
          .withMaxCatalogVersion(MAX_CATALOG_VERSION)
          .build(engine)
          .writeCheckpoint(engine);
    }
    // The metadata cleanup: published deltas v0..delTo.
    for (long v = 0; v <= delTo; v++) {
      Files.delete(log.resolve(delta(v)));
    }

    System.out.println("== " + label);
    try (Stream<Path> files = Files.list(log)) {
      System.out.println("  _delta_log: " + files.filter(Files::isRegularFile)
          .filter(p -> !p.getFileName().toString().startsWith(".")) // Hadoop's .crc side files
          .map(p -> p.getFileName().toString().replaceAll("^0+(?=[0-9])", ""))
          .sorted().collect(Collectors.joining(" ")));
    }

    Snapshot[] latest = new Snapshot[1];
    show("latest", () -> {
      latest[0] = builder(table, catalogCommits).build(engine);
      return describe(engine, latest[0]);
    });
    for (long v = 9; v <= MAX_CATALOG_VERSION; v++) {
      long version = v;
      show("atVersion(" + v + ")",
          () -> describe(engine, builder(table, catalogCommits).atVersion(version).build(engine)));
    }
    if (latest[0] == null) {
      return;
    }
    for (long v : new long[] {9, 11}) {
      long ts = ict(v);
      show("atTimestamp(" + ts + " = ICT of v" + v + ")",
          () -> describe(engine,
              builder(table, catalogCommits).atTimestamp(ts, latest[0]).build(engine)));
    }
    // The same, with the log data cut to the catalog's commits above the published v9.
    List<ParsedLogData> above9 = catalogCommits.subList(4, catalogCommits.size()); // v10..v12
    show("atTimestamp(" + ict(9) + "), log data v10..v12 only",
        () -> describe(engine,
            builder(table, above9).atTimestamp(ict(9), latest[0]).build(engine)));
    for (long v : new long[] {9, 11}) {
      long ts = ict(v);
      show("commit range from atTimestamp(" + ts + ")", () -> {
        CommitRange range =
            TableManager.loadCommitRange(table, CommitBoundary.atTimestamp(ts, latest[0]))
                .withLogData(catalogCommits)
                .withMaxCatalogVersion(MAX_CATALOG_VERSION)
                .build(engine);
        return "v" + range.getStartVersion() + "..v" + range.getEndVersion();
      });
    }
  }

  private static io.delta.kernel.SnapshotBuilder builder(String table, List<ParsedLogData> logData) {
    return TableManager.loadSnapshot(table).withLogData(logData).withMaxCatalogVersion(MAX_CATALOG_VERSION);
  }

  private static String describe(Engine engine, Snapshot s) {
    return "snapshot v" + s.getVersion() + " (timestamp " + s.getTimestamp(engine) + ")";
  }

  private static void show(String call, Callable<String> body) {
    String out;
    try {
      out = body.call();
    } catch (Throwable t) {
      String msg = String.valueOf(t.getMessage()).split("\n")[0];
      out = "THROWS " + t.getClass().getName() + ": " + msg;
    }
    System.out.printf("  %-44s -> %s%n", call, out);
  }

  private static long ict(long v) {
    return 1_000 * (v + 1);
  }

  private static String delta(long v) {
    return String.format("%020d.json", v);
  }

  private static String commitInfo(long v) {
    return "{\"commitInfo\":{\"inCommitTimestamp\":" + ict(v) + ",\"timestamp\":" + ict(v)
        + ",\"operation\":\"" + (v == 0 ? "CREATE TABLE" : "WRITE") + "\",\"operationParameters\":{},"
        + "\"engineInfo\":\"hand-written reproducer\"}}";
  }

  private static String add(long v) {
    return "{\"add\":{\"path\":\"file-" + v + ".parquet\",\"partitionValues\":{},\"size\":100,"
        + "\"modificationTime\":" + ict(v) + ",\"dataChange\":true}}";
  }

  private static void write(Path file, String... lines) throws Exception {
    Files.write(file, (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
  }
}
