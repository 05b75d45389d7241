package lakecert.kernel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.Operation;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.SnapshotBuilder;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.commit.Committer;
import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.actions.AddFile;
import io.delta.kernel.internal.actions.SingleAction;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * Delta Kernel as the engine of profile delta-row-conflicts, on path-based (filesystem) tables.
 *
 * <p>{@code engine_begin} builds a Kernel transaction on the table's latest snapshot, writes its data
 * files, and starts {@code commit} on a thread of its own; the snapshot's committer is wrapped in a
 * {@link HeldCommitter}, so the commit parks before it writes {@code _delta_log/<v>.json}, and the
 * request answers once it is parked. {@code engine_release} lets it go and waits for Kernel's own
 * outcome (written at a version, possibly after its conflict checker rebased it, or refused).
 *
 * <p>Catalog-managed tables ({@code "catalog_managed": true} in a request) are created, loaded and
 * committed through Unity Catalog ({@link CatalogTables}, Kernel's UC client against the run's
 * served catalog): the held committer wraps Kernel's UC committer, so the hold is where Kernel would
 * propose to the catalog, and reads load snapshots with the catalog's ratified commits.
 *
 * <p>What it builds: blind appends (INSERT) and table property changes (METADATA) with Kernel's
 * public write API; copy-on-write DELETE, UPDATE and OPTIMIZE ({@link #rewrite}) with the removes
 * built by Kernel's internal action classes, as Kernel's connectors do. No MERGE, and no deletion
 * vectors (Kernel has no API that writes one).
 */
final class ConflictEngine {
  private static final String ENGINE_INFO = "lakecert-delta-kernel-engine";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] COLUMNS = {"id", "color", "label"};
  static final StructType SCHEMA =
      new StructType()
          .add(COLUMNS[0], StringType.STRING, true)
          .add(COLUMNS[1], StringType.STRING, true)
          .add(COLUMNS[2], StringType.STRING, true);
  // the METADATA operation's change, as the delta-spark engine makes it
  private static final Map<String, String> PROPERTY_CHANGE = Map.of("delta.logRetentionDuration", "interval 31 days");
  private static final long HANG_GUARD_MS = 600_000;

  private final Engine engine;
  private final CatalogTables catalog;
  private final Map<Integer, Held> held = new HashMap<>();
  private final AtomicInteger handles = new AtomicInteger();

  private static final class Held {
    final HeldCommitter committer;
    final CompletableFuture<TransactionCommitResult> outcome;

    Held(HeldCommitter committer, CompletableFuture<TransactionCommitResult> outcome) {
      this.committer = committer;
      this.outcome = outcome;
    }
  }

  /** Catalog-managed tables through Unity Catalog, named by a request's catalog, schema and name. */
  interface CatalogTables {
    /** Create the table (staging table, Kernel's create-table transaction): its first version. */
    long create(JsonNode req, StructType schema, Map<String, String> properties, String engineInfo) throws Exception;

    /** A snapshot with the catalog's ratified commits; {@code wrap} is given the table's committer. */
    Snapshot load(JsonNode req, Optional<Long> version, UnaryOperator<Committer> wrap) throws Exception;
  }

  ConflictEngine(Engine engine, CatalogTables catalog) {
    this.engine = engine;
    this.catalog = catalog;
  }

  private static boolean managed(JsonNode req) {
    return req.path("catalog_managed").asBoolean(false);
  }

  /** The table's snapshot (latest, or at {@code version}), its committer passed through {@code wrap}. */
  private Snapshot snapshot(JsonNode req, Optional<Long> version, UnaryOperator<Committer> wrap) throws Exception {
    if (managed(req)) {
      return catalog.load(req, version, wrap);
    }
    String location = req.path("location").asText();
    SnapshotBuilder builder = TableManager.loadSnapshot(location);
    if (version.isPresent()) {
      builder = builder.atVersion(version.get());
    }
    Snapshot plain = builder.build(engine);
    Committer own = KernelCompat.committerOf(plain);
    Committer wrapped = wrap.apply(own);
    return wrapped == own ? plain : builder.withCommitter(wrapped).build(engine);
  }

  JsonNode handle(JsonNode req) throws Exception {
    switch (req.path("op").asText()) {
      case "engine_create":
        return create(req);
      case "engine_begin":
        return begin(req);
      case "engine_release":
        return release(req);
      case "engine_read":
        return read(req);
      case "engine_publish":
        return publish(req);
      default:
        throw new IllegalArgumentException("unknown op " + req.path("op").asText());
    }
  }

  private JsonNode create(JsonNode req) throws Exception {
    String location = req.path("location").asText();
    Map<String, String> properties = new HashMap<>();
    req.path("properties").fields().forEachRemaining(e -> properties.put(e.getKey(), e.getValue().asText()));
    long version;
    if (managed(req)) {
      version = catalog.create(req, SCHEMA, properties, ENGINE_INFO);
    } else {
      Transaction create =
          TableManager.buildCreateTableTransaction(location, SCHEMA, ENGINE_INFO)
              .withTableProperties(properties)
              .build(engine);
      version = create.commit(engine, CloseableIterable.emptyIterable()).getVersion();
    }
    if (req.path("files").size() > 0) { // one append of every group, a data file per group
      Transaction txn =
          snapshot(req, Optional.empty(), UnaryOperator.identity())
              .buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE)
              .build(engine);
      List<Row> actions = new ArrayList<>();
      for (JsonNode file : req.path("files")) {
        actions.addAll(writeRows(txn, rowsOf(file)));
      }
      version = txn.commit(engine, CloseableIterable.inMemoryIterable(Iterators.of(actions))).getVersion();
    }
    return JSON.getNodeFactory().numberNode(version);
  }

  private static List<String[]> rowsOf(JsonNode rows) {
    List<String[]> out = new ArrayList<>();
    for (JsonNode row : rows) {
      String[] values = new String[COLUMNS.length];
      for (int i = 0; i < values.length; i++) {
        values[i] = row.path(i).isNull() || row.path(i).isMissingNode() ? null : row.path(i).asText();
      }
      out.add(values);
    }
    return out;
  }

  private JsonNode begin(JsonNode req) throws Exception {
    JsonNode op = req.path("operation");
    // The table's own committer (Kernel's UC committer on a catalog-managed table), wrapped:
    // Kernel's public seam for where a commit goes.
    HeldCommitter[] wrapped = new HeldCommitter[1];
    Snapshot snapshot =
        snapshot(
            req,
            Optional.empty(),
            inner -> {
              wrapped[0] = HeldCommitter.around(inner);
              return wrapped[0];
            });
    HeldCommitter committer = wrapped[0];
    if (committer == null) {
      throw new IllegalStateException("Kernel built the snapshot without asking for its committer");
    }
    Transaction txn;
    List<Row> actions;
    switch (op.path("kind").asText()) {
      case "INSERT":
        txn = snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).build(engine);
        actions = writeRows(txn, rowsOf(JSON.createArrayNode().add(op.path("values"))));
        break;
      case "METADATA":
        txn =
            snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.MANUAL_UPDATE)
                .withTablePropertiesAdded(PROPERTY_CHANGE)
                .build(engine);
        actions = List.of();
        break;
      case "DELETE":
      case "UPDATE":
      case "COMPACT":
        txn = snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).build(engine);
        actions = rewrite(snapshot, txn, op);
        if (actions.isEmpty()) {
          // Nothing matched: like Delta's commitIfNeeded, a write that changes nothing writes no
          // version (Kernel itself would commit one holding only commitInfo).
          int handle = handles.incrementAndGet();
          held.put(handle, new Held(committer, null));
          return JSON.createObjectNode().put("handle", handle).put("start", snapshot.getVersion());
        }
        break;
      default:
        throw new UnsupportedOperationException("lakecert's Kernel engine builds no " + op.path("kind").asText());
    }
    Transaction commit = txn;
    boolean faulty = req.path("fault_overwrite_commits").asBoolean(false);
    CompletableFuture<TransactionCommitResult> outcome =
        CompletableFuture.supplyAsync(
            () -> {
              ObservedEngine.FAULT_OVERWRITE_COMMITS.set(faulty);
              try {
                return commit.commit(engine, CloseableIterable.inMemoryIterable(Iterators.of(actions)));
              } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
              }
            },
            r -> {
              Thread t = new Thread(r, "lakecert-commit");
              t.setDaemon(true);
              t.start();
            });
    long deadline = System.currentTimeMillis() + HANG_GUARD_MS;
    while (!committer.awaitParked(50) && !outcome.isDone()) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("Kernel's commit neither parked nor ended");
      }
    }
    int handle = handles.incrementAndGet();
    held.put(handle, new Held(committer, outcome));
    return JSON.createObjectNode().put("handle", handle).put("start", snapshot.getVersion());
  }

  private JsonNode release(JsonNode req) throws Exception {
    Held h = held.remove(req.path("handle").asInt());
    if (h == null) {
      throw new IllegalArgumentException("no held commit " + req.path("handle"));
    }
    h.committer.release();
    ObjectNode out = JSON.createObjectNode();
    ArrayNode attempts = out.putArray("attempts");
    if (h.outcome == null) { // nothing to commit (see begin)
      out.put("committed", false).putNull("version");
      return out.put("reason", "nothing to commit: no version written");
    }
    try {
      TransactionCommitResult result = h.outcome.get(HANG_GUARD_MS, TimeUnit.MILLISECONDS);
      h.committer.attempts().forEach(attempts::add);
      return out.put("committed", true).put("version", result.getVersion());
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() instanceof java.util.concurrent.CompletionException ? e.getCause().getCause() : e.getCause();
      if (!"conflict".equals(Errors.kind(cause))) {
        throw cause instanceof Exception ? (Exception) cause : new RuntimeException(cause);
      }
      h.committer.attempts().forEach(attempts::add);
      out.put("committed", false).putNull("version");
      return out.put("reason", cause.getClass().getSimpleName());
    }
  }

  private List<Row> writeRows(Transaction txn, List<String[]> rows) throws Exception {
    return TableData.appendActions(engine, txn, new StringRows(rows));
  }

  /**
   * Copy-on-write DELETE, UPDATE and OPTIMIZE, the way Kernel's connectors build them: read each
   * live data file of {@code snapshot} through Kernel's scan (deletion vectors applied), remove every
   * file the operation touches and write what stays of it into a new file of {@code txn}.
   *
   * <ul>
   *   <li>DELETE and UPDATE touch the files holding a row the predicate matches ({@code id = <id>},
   *       or {@code where}: a non-key column's value); a DELETE drops those rows, an UPDATE writes
   *       them with the operation's non-null values set. Removes and adds have {@code dataChange=true}.
   *   <li>OPTIMIZE (COMPACT) touches every live file (or those holding a row with its {@code id},
   *       when it names one) and writes all their rows into one file; removes and the add have
   *       {@code dataChange=false} (PROTOCOL.md: a rearrangement of data that changes no row).
   * </ul>
   *
   * <p>Kernel's public API builds adds only ({@code Transaction.generateAppendActions}). The removes
   * are built with Kernel's internal API, {@code io.delta.kernel.internal.actions.AddFile} (read from
   * the scan file's {@code add} struct, {@code InternalScanFileUtils.ADD_FILE_ORDINAL}) and its
   * {@code toRemoveFileRow}, wrapped by {@code io.delta.kernel.internal.actions.SingleAction
   * .createRemoveFileSingleAction}; a remove keeps the file's deletion vector, so it names the
   * logical file the snapshot had. OPTIMIZE's add is Kernel's own append action with its {@code
   * dataChange} read as false ({@link QuietAdd}, re-wrapped with {@code
   * SingleAction.createAddFileSingleAction}). Kernel writes no deletion vectors, so on a table with
   * them enabled these are still copy-on-write (the protocol allows, never requires, a deletion
   * vector for a delete). Row-tracking tables are not asked for (engine.py says why).
   *
   * <p>Empty when the operation touches no file: nothing to commit.
   */
  private List<Row> rewrite(Snapshot snapshot, Transaction txn, JsonNode op) throws Exception {
    String kind = op.path("kind").asText();
    boolean compact = "COMPACT".equals(kind);
    String id = op.path("id").isTextual() ? op.path("id").asText() : null;
    int whereColumn = op.path("where").isArray() ? op.path("where").path(0).asInt() : -1;
    String whereValue = whereColumn >= 0 ? op.path("where").path(1).asText() : null;
    java.util.function.Predicate<String[]> matches =
        whereColumn >= 0
            ? row -> whereValue.equals(row[whereColumn])
            : row -> id != null && id.equals(row[0]);
    String[] set = rowsOf(JSON.createArrayNode().add(op.path("values"))).get(0);
    long now = System.currentTimeMillis(); // the removes' deletionTimestamp
    List<Row> removes = new ArrayList<>();
    List<String[]> written = new ArrayList<>();
    Scan scan = snapshot.getScanBuilder().build();
    TableData.forEachFile(
        engine,
        scan,
        scanFile -> {
          List<String[]> rows = new ArrayList<>();
          TableData.forEachRow(engine, scan, scanFile, row -> rows.add(valuesOf(row)));
          boolean touched =
              compact ? id == null || rows.stream().anyMatch(matches) : rows.stream().anyMatch(matches);
          if (!touched) {
            return;
          }
          AddFile add = new AddFile(scanFile.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL));
          removes.add(SingleAction.createRemoveFileSingleAction(add.toRemoveFileRow(!compact, Optional.of(now))));
          for (String[] row : rows) {
            if (compact || !matches.test(row)) {
              written.add(row);
            } else if ("UPDATE".equals(kind)) {
              String[] updated = row.clone();
              for (int i = 0; i < updated.length; i++) {
                if (set[i] != null) {
                  updated[i] = set[i];
                }
              }
              written.add(updated);
            } // a DELETE's matched row is not written back
          }
        });
    if (removes.isEmpty()) {
      return removes;
    }
    List<Row> actions = new ArrayList<>(removes);
    if (!written.isEmpty()) {
      for (Row action : writeRows(txn, written)) {
        actions.add(compact ? QuietAdd.of(action) : action);
      }
    }
    return actions;
  }

  private static String[] valuesOf(Row row) {
    String[] values = new String[COLUMNS.length];
    for (int i = 0; i < COLUMNS.length; i++) {
      int at = row.getSchema().indexOf(COLUMNS[i]);
      values[i] = row.isNullAt(at) ? null : row.getString(at);
    }
    return values;
  }

  /** Kernel's publish of every ratified commit of the table's latest snapshot into _delta_log. */
  private JsonNode publish(JsonNode req) throws Exception {
    if (!managed(req)) {
      throw new IllegalArgumentException("only a catalog-managed table has commits to publish");
    }
    Snapshot snapshot = snapshot(req, Optional.empty(), UnaryOperator.identity());
    snapshot.publish(engine);
    return JSON.getNodeFactory().numberNode(snapshot.getVersion());
  }

  private JsonNode read(JsonNode req) throws Exception {
    Optional<Long> version =
        req.path("version").isIntegralNumber() ? Optional.of(req.path("version").asLong()) : Optional.empty();
    Snapshot snapshot = snapshot(req, version, UnaryOperator.identity());
    Scan scan = snapshot.getScanBuilder().build();
    ArrayNode rows = JSON.createArrayNode();
    TableData.forEachFile(engine, scan, file -> TableData.forEachRow(engine, scan, file, row -> addRow(row, rows)));
    ObjectNode out = JSON.createObjectNode().put("version", snapshot.getVersion());
    out.set("rows", rows);
    return out;
  }

  private static void addRow(Row row, ArrayNode out) {
    ArrayNode values = out.addArray();
    for (String column : COLUMNS) {
      int at = row.getSchema().indexOf(column);
      if (row.isNullAt(at)) {
        values.addNull();
      } else {
        values.add(row.getString(at));
      }
    }
  }

  /** Rows of three string columns as a Kernel columnar batch. */
  private static final class StringRows implements ColumnarBatch {
    private final List<String[]> rows;

    StringRows(List<String[]> rows) {
      this.rows = rows;
    }

    @Override
    public StructType getSchema() {
      return SCHEMA;
    }

    @Override
    public int getSize() {
      return rows.size();
    }

    @Override
    public ColumnVector getColumnVector(int ordinal) {
      return new ColumnVector() {
        @Override
        public DataType getDataType() {
          return StringType.STRING;
        }

        @Override
        public int getSize() {
          return rows.size();
        }

        @Override
        public void close() {}

        @Override
        public boolean isNullAt(int rowId) {
          return rows.get(rowId)[ordinal] == null;
        }

        @Override
        public String getString(int rowId) {
          return rows.get(rowId)[ordinal];
        }
      };
    }
  }
}
