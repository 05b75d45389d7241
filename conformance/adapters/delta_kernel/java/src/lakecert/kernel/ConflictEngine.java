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
 * <p>What Kernel 4.4's public write API can build: blind appends (INSERT) and table property
 * changes (METADATA). Removes and deletion vectors are not in it: lakecert does not ask.
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
    Committer wrapped = wrap.apply(plain.getCommitter());
    return wrapped == plain.getCommitter() ? plain : builder.withCommitter(wrapped).build(engine);
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
    for (JsonNode file : req.path("files")) { // one append, one data file, per group
      Transaction txn =
          snapshot(req, Optional.empty(), UnaryOperator.identity())
              .buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE)
              .build(engine);
      List<Row> actions = writeRows(txn, rowsOf(file));
      version = txn.commit(engine, CloseableIterable.inMemoryIterable(Iterators.of(actions))).getVersion();
    }
    return JSON.getNodeFactory().numberNode(version);
  }

  private static List<String[]> rowsOf(JsonNode rows) {
    List<String[]> out = new ArrayList<>();
    for (JsonNode row : rows) {
      String[] values = new String[COLUMNS.length];
      for (int i = 0; i < values.length; i++) {
        values[i] = row.path(i).isNull() ? null : row.path(i).asText();
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
      default:
        throw new UnsupportedOperationException("Kernel's public write API has no " + op.path("kind").asText());
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
