import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.internal.SnapshotImpl;
import io.delta.kernel.internal.files.ParsedCatalogCommitData;
import io.delta.kernel.internal.files.ParsedLogData;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;

/**
 * A log compaction file against the catalog's ratified commits, by hand.
 *
 * <p>A catalog-managed table whose log holds published commits v0..v5, and whose catalog returns
 * the ratified commits v3..v6 as staged commit files: v3..v5 ratified with other content than the
 * published files of those versions (each commit adds one file named after where it comes from,
 * published-N.parquet or catalog-N.parquet), v6 ratified and not yet published. The catalog's
 * version of a commit is authoritative (catalog-managed RFC, "Reading Catalog-managed Tables"), so
 * the latest snapshot should hold published-1, published-2 and catalog-3..catalog-6.
 *
 * <p>The latest snapshot is loaded twice, with the catalog's commits as log data and v6 as the max
 * catalog version: without a log compaction file, then with 3.5.compacted.json written from the
 * published v3..v5. Each time the live add paths are listed through Kernel's scan (no data file is
 * read, none exists).
 *
 * <p>Kernel's public API only, but for ParsedLogData/ParsedCatalogCommitData (in an internal
 * package, yet what SnapshotBuilder.withLogData takes) and, for the "replayed" line, the snapshot's
 * LogSegment (internal). No lakecert code is used. Usage: java -cp JARS:. Repro [TABLE_DIR]
 */
public final class Repro {
  private static final String SCHEMA =
      "{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":["
          + "{\\\"name\\\":\\\"id\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}},"
          + "{\\\"name\\\":\\\"value\\\",\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}]}";

  public static void main(String[] args) throws Exception {
    Path dir = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("kernel-compaction-");
    if (Files.exists(dir.resolve("_delta_log"))) {
      throw new IllegalArgumentException(dir + " already holds a _delta_log; give a new directory");
    }
    Path log = dir.resolve("_delta_log");
    Path staged = log.resolve("_staged_commits");
    Files.createDirectories(staged);
    String table = dir.toUri().toString();
    Engine engine = DefaultEngine.create(new Configuration());
    System.out.println(
        "delta-kernel-api " + Snapshot.class.getPackage().getImplementationVersion() + ", table " + table);

    // Published: v0 (protocol, metadata), v1..v5 each adding published-N.parquet.
    write(
        log.resolve(delta(0)),
        commitInfo(0),
        "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
            + "\"readerFeatures\":[\"catalogManaged\",\"vacuumProtocolCheck\"],"
            + "\"writerFeatures\":[\"catalogManaged\",\"inCommitTimestamp\",\"vacuumProtocolCheck\"]}}",
        "{\"metaData\":{\"id\":\"" + UUID.randomUUID() + "\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
            + "\"schemaString\":\"" + SCHEMA + "\",\"partitionColumns\":[],"
            + "\"configuration\":{\"delta.enableInCommitTimestamps\":\"true\"},\"createdTime\":1000}}");
    for (long v = 1; v <= 5; v++) {
      write(log.resolve(delta(v)), commitInfo(v), add("published-" + v, v));
    }
    // Ratified by the catalog: v3..v6 as staged commits, each adding catalog-N.parquet.
    List<ParsedLogData> catalogCommits = new ArrayList<>();
    for (long v = 3; v <= 6; v++) {
      Path file = staged.resolve(String.format("%020d.%s.json", v, UUID.randomUUID()));
      write(file, commitInfo(v), add("catalog-" + v, v));
      String path = engine.getFileSystemClient().resolvePath(file.toUri().toString());
      catalogCommits.add(
          ParsedCatalogCommitData.forFileStatus(
              FileStatus.of(path, Files.size(file), Files.getLastModifiedTime(file).toMillis())));
    }
    long maxCatalogVersion = 6;
    System.out.println("published: v0..v5 (v1..v5 add published-N.parquet)");
    System.out.println("catalog:   v3..v6 as staged commits (add catalog-N.parquet), max catalog version 6");

    List<String> without = load(engine, table, catalogCommits, maxCatalogVersion, "no compaction file");

    // A log compaction of v3..v5 made from the published files (reconciled actions, no commitInfo).
    write(
        log.resolve(String.format("%020d.%020d.compacted.json", 3, 5)),
        add("published-3", 3),
        add("published-4", 4),
        add("published-5", 5));
    System.out.println("wrote _delta_log/" + String.format("%020d.%020d.compacted.json", 3, 5)
        + " from the published v3..v5");

    List<String> with = load(engine, table, catalogCommits, maxCatalogVersion, "with compaction file");

    System.out.println("without compaction, v3..v5 came from: " + source(without));
    System.out.println("with compaction,    v3..v5 came from: " + source(with));
    System.out.println(
        source(with).equals(source(without))
            ? "OK: the compaction file does not change which source wins"
            : "BUG: the compaction of the published files overrides the catalog's ratified v3..v5");
  }

  private static List<String> load(
      Engine engine, String table, List<ParsedLogData> catalogCommits, long maxCatalogVersion, String label)
      throws Exception {
    Snapshot snapshot =
        TableManager.loadSnapshot(table)
            .withLogData(catalogCommits)
            .withMaxCatalogVersion(maxCatalogVersion)
            .build(engine);
    List<String> paths = livePaths(engine, snapshot);
    System.out.println("== " + label);
    System.out.println("  snapshot v" + snapshot.getVersion() + " live adds " + paths);
    System.out.println(
        "  replayed (LogSegment, internal): "
            + ((SnapshotImpl) snapshot)
                .getLogSegment().allFilesWithCompactionsReversed().stream()
                    .map(f -> shortName(f.getPath()))
                    .collect(Collectors.joining(", ")));
    return paths;
  }

  /** The add paths of the snapshot's live files, as listed by Kernel's scan; no data is read. */
  private static List<String> livePaths(Engine engine, Snapshot snapshot) throws Exception {
    Scan scan = snapshot.getScanBuilder().build();
    List<String> out = new ArrayList<>();
    try (CloseableIterator<FilteredColumnarBatch> batches = scan.getScanFiles(engine)) {
      while (batches.hasNext()) {
        FilteredColumnarBatch batch = batches.next();
        StructType schema = batch.getData().getSchema();
        int addOrdinal = schema.indexOf("add");
        int pathOrdinal = ((StructType) schema.get("add").getDataType()).indexOf("path");
        try (CloseableIterator<Row> rows = batch.getRows()) {
          while (rows.hasNext()) {
            out.add(rows.next().getStruct(addOrdinal).getString(pathOrdinal));
          }
        }
      }
    }
    Collections.sort(out);
    return out;
  }

  private static String source(List<String> paths) {
    List<String> mid = new ArrayList<>();
    for (long v = 3; v <= 5; v++) {
      for (String p : paths) {
        if (p.endsWith("-" + v + ".parquet")) {
          mid.add(p.substring(0, p.indexOf('-')));
        }
      }
    }
    if (mid.size() == 3 && mid.stream().allMatch("catalog"::equals)) {
      return "the catalog's ratified commits (correct)";
    }
    if (mid.size() == 3 && mid.stream().allMatch("published"::equals)) {
      return "the published files";
    }
    return "a mix " + mid;
  }

  private static String shortName(String path) {
    String name = path.substring(path.lastIndexOf('/') + 1).replaceAll("^0+(?=[0-9])", "");
    name = name.replaceAll("\\.0+(?=[0-9]+\\.compacted)", ".");
    return path.contains("/_staged_commits/")
        ? "_staged_commits/" + name.replaceAll("\\.[0-9a-f-]{36}\\.", ".<uuid>.")
        : name;
  }

  private static String delta(long v) {
    return String.format("%020d.json", v);
  }

  private static String commitInfo(long v) {
    long ict = 1_000 * (v + 1);
    return "{\"commitInfo\":{\"inCommitTimestamp\":" + ict + ",\"timestamp\":" + ict
        + ",\"operation\":\"" + (v == 0 ? "CREATE TABLE" : "WRITE") + "\",\"operationParameters\":{},"
        + "\"engineInfo\":\"hand-written reproducer\"}}";
  }

  private static String add(String name, long v) {
    return "{\"add\":{\"path\":\"" + name + ".parquet\",\"partitionValues\":{},\"size\":100,"
        + "\"modificationTime\":" + (1_000 * (v + 1)) + ",\"dataChange\":true}}";
  }

  private static void write(Path file, String... lines) throws Exception {
    Files.write(file, (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
  }
}
