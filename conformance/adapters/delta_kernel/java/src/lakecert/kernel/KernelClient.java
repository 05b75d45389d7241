package lakecert.kernel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.Operation;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.commit.Committer;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.CheckpointAlreadyExistsException;
import io.delta.kernel.exceptions.KernelException;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.actions.AddFile;
import io.delta.kernel.internal.actions.SingleAction;
import io.delta.kernel.types.StructType;
import io.delta.kernel.unitycatalog.UCCatalogManagedClient;
import io.delta.kernel.unitycatalog.UCTableIdentifier;
import io.delta.kernel.utils.CloseableIterable;
import io.delta.storage.commit.uccommitcoordinator.UCTokenBasedRestClient;
import io.unitycatalog.client.ApiClient;
import io.unitycatalog.client.ApiClientBuilder;
import io.unitycatalog.client.api.TablesApi;
import io.unitycatalog.client.auth.TokenProvider;
import io.unitycatalog.client.model.CreateStagingTable;
import io.unitycatalog.client.model.StagingTableInfo;
import io.unitycatalog.client.model.TableInfo;
import java.lang.invoke.MethodHandles;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.apache.hadoop.conf.Configuration;

/**
 * The contract's client operations done the way a Kernel connector does them for a UC-managed
 * table: the table is found through UC's tables API, snapshots come from {@link
 * UCCatalogManagedClient#loadSnapshot}, writes are Kernel transactions whose committer proposes to
 * UC, and creation goes staging table, create-table transaction (version 0), UC table.
 */
final class KernelClient implements AutoCloseable {
  private static final String ENGINE_INFO = "lakecert-delta-kernel-driver";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final UCTokenBasedRestClient ucClient;
  private final HoldingUCClient kernelUc;
  private final TablesApi tables;
  private final Engine engine;
  private final ConflictEngine conflicts; // profile delta-row-conflicts: path-based tables, held commits

  KernelClient(String baseUrl, String token, Map<String, String> hadoop, Driver.Announcer announcer) {
    Map<String, String> auth = new HashMap<>();
    auth.put("type", "static");
    auth.put("token", token);
    TokenProvider tokens = TokenProvider.create(auth);
    this.ucClient = new UCTokenBasedRestClient(baseUrl, tokens, Map.of());
    this.kernelUc = new HoldingUCClient(ucClient);
    ApiClient api = ApiClientBuilder.create().uri(baseUrl).tokenProvider(tokens).build();
    this.tables = new TablesApi(api);
    Configuration conf = new Configuration();
    hadoop.forEach(conf::set);
    this.engine = new ObservedEngine(DefaultEngine.create(conf), announcer);
    this.conflicts = new ConflictEngine(engine, new CatalogTables());
  }

  /**
   * Kernel's UC client, whose committers can be wrapped: {@code createUCCommitter} is the protected
   * factory {@code loadSnapshot} builds each snapshot's committer with. Requests run one at a time,
   * so the wrap set around one {@code loadSnapshot} is that snapshot's only.
   */
  private static final class HoldingUCClient extends UCCatalogManagedClient {
    private UnaryOperator<Committer> wrap = UnaryOperator.identity();

    HoldingUCClient(UCTokenBasedRestClient client) {
      super(client);
    }

    Snapshot load(Engine engine, Table t, Optional<Long> version, UnaryOperator<Committer> with) {
      wrap = with;
      try {
        return loadSnapshot(engine, t.tableId, t.location, t.id, version, Optional.empty());
      } finally {
        wrap = UnaryOperator.identity();
      }
    }

    // Both forms of the factory, without @Override: Kernel 4.3.1 has (and its loadSnapshot calls)
    // only the three-argument one, 4.4.0 and later call the four-argument one
    // (KernelCompat explains). Each wraps what Kernel's own factory builds.
    protected Committer createUCCommitter(
        io.delta.storage.commit.uccommitcoordinator.UCClient client, String tableId, String tablePath) {
      return wrap.apply(super.createUCCommitter(client, tableId, tablePath));
    }

    protected Committer createUCCommitter(
        io.delta.storage.commit.uccommitcoordinator.UCClient client,
        String tableId,
        String tablePath,
        UCTableIdentifier id) {
      return wrap.apply(
          KernelCompat.superUCCommitter(MethodHandles.lookup(), this, client, tableId, tablePath, id));
    }
  }

  /** The engine side's catalog-managed tables (profile delta-row-conflicts), as the client creates them. */
  private final class CatalogTables implements ConflictEngine.CatalogTables {
    @Override
    public long create(JsonNode req, StructType schema, Map<String, String> properties, String engineInfo)
        throws Exception {
      return createManaged(req, schema, properties, engineInfo);
    }

    @Override
    public Snapshot load(JsonNode req, Optional<Long> version, UnaryOperator<Committer> wrap) throws Exception {
      return kernelUc.load(engine, resolve(req), version, wrap);
    }
  }

  /** A table as UC resolves it. */
  private static final class Table {
    final UCTableIdentifier id;
    final String tableId;
    final String location;

    Table(UCTableIdentifier id, String tableId, String location) {
      this.id = id;
      this.tableId = tableId;
      this.location = location;
    }
  }

  private static UCTableIdentifier identifier(JsonNode req) {
    return new UCTableIdentifier(
        req.path("catalog").asText(), req.path("schema").asText(), req.path("name").asText());
  }

  private Table resolve(JsonNode req) throws Exception {
    UCTableIdentifier id = identifier(req);
    String full = id.getCatalogName() + "." + id.getSchemaName() + "." + id.getTableName();
    TableInfo info = tables.getTable(full, null, null);
    return new Table(id, info.getTableId(), info.getStorageLocation());
  }

  private Snapshot snapshot(Table t, Optional<Long> version, Optional<Long> timestamp) {
    return kernelUc.loadSnapshot(engine, t.tableId, t.location, t.id, version, timestamp);
  }

  private static Optional<Long> optLong(JsonNode req, String field) {
    JsonNode n = req.path(field);
    return n.isIntegralNumber() ? Optional.of(n.asLong()) : Optional.empty();
  }

  JsonNode handle(JsonNode req) throws Exception {
    String op = req.path("op").asText();
    if (op.startsWith("engine_")) {
      return conflicts.handle(req);
    }
    switch (op) {
      case "create_table":
        return createTable(req);
      case "append":
        return append(req);
      case "delete":
        return delete(req);
      case "publish":
        snapshot(resolve(req), Optional.empty(), Optional.empty()).publish(engine);
        return NullNode.getInstance();
      case "checkpoint":
        return checkpoint(req);
      case "read":
        return read(req);
      case "read_path":
        return rows(pathSnapshot(req));
      case "append_path":
        return appendPath(req);
      default:
        throw new IllegalArgumentException("unknown op " + op);
    }
  }

  private JsonNode createTable(JsonNode req) throws Exception {
    return JSON.getNodeFactory().numberNode(createManaged(req, RowsBatch.SCHEMA, Map.of(), ENGINE_INFO));
  }

  private long createManaged(JsonNode req, StructType schema, Map<String, String> properties, String engineInfo)
      throws Exception {
    UCTableIdentifier id = identifier(req);
    StagingTableInfo staged =
        tables.createStagingTable(
            new CreateStagingTable()
                .catalogName(id.getCatalogName())
                .schemaName(id.getSchemaName())
                .name(id.getTableName()));
    io.delta.kernel.transaction.CreateTableTransactionBuilder builder =
        kernelUc.buildCreateTableTransaction(staged.getId(), staged.getStagingLocation(), schema, engineInfo, id);
    if (!properties.isEmpty()) {
      builder = builder.withTableProperties(properties); // added to the catalog's required ones
    }
    TransactionCommitResult result = builder.build(engine).commit(engine, CloseableIterable.emptyIterable());
    return result.getVersion();
  }

  /** The add actions for ``rows`` written as new data files of ``txn``'s table. */
  private List<Row> writeRows(Transaction txn, List<Long> ids, List<String> values) throws Exception {
    if (ids.isEmpty()) {
      return new ArrayList<>();
    }
    return TableData.appendActions(engine, txn, new RowsBatch(ids, values));
  }

  private JsonNode append(JsonNode req) throws Exception {
    Table t = resolve(req);
    List<Long> ids = new ArrayList<>();
    List<String> values = new ArrayList<>();
    for (JsonNode row : req.path("rows")) {
      ids.add(row.path("id").isNull() ? null : row.path("id").asLong());
      values.add(row.path("value").isNull() || row.path("value").isMissingNode() ? null : row.path("value").asText());
    }
    Transaction txn =
        snapshot(t, Optional.empty(), Optional.empty())
            .buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE)
            .build(engine);
    List<Row> actions = writeRows(txn, ids, values);
    TransactionCommitResult result = txn.commit(engine, CloseableIterable.inMemoryIterable(Iterators.of(actions)));
    return JSON.getNodeFactory().numberNode(result.getVersion());
  }

  /** Copy-on-write delete: every file holding a doomed row is removed and its survivors rewritten. */
  private JsonNode delete(JsonNode req) throws Exception {
    Table t = resolve(req);
    Set<Long> doomed = new HashSet<>();
    req.path("ids").forEach(n -> doomed.add(n.asLong()));
    Snapshot snapshot = snapshot(t, Optional.empty(), Optional.empty());
    Transaction txn = snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).build(engine);
    List<Row> actions = new ArrayList<>();
    List<Long> keptIds = new ArrayList<>();
    List<String> keptValues = new ArrayList<>();
    Scan scan = snapshot.getScanBuilder().build();
    forEachFileRows(
        scan,
        (scanFile, ids, values) -> {
          if (ids.stream().noneMatch(doomed::contains)) {
            return;
          }
          AddFile add = new AddFile(scanFile.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL));
          actions.add(
              SingleAction.createRemoveFileSingleAction(
                  // the remove's deletionTimestamp is a time (ms), not the snapshot's version
                  add.toRemoveFileRow(true, Optional.of(System.currentTimeMillis()))));
          for (int i = 0; i < ids.size(); i++) {
            if (!doomed.contains(ids.get(i))) {
              keptIds.add(ids.get(i));
              keptValues.add(values.get(i));
            }
          }
        });
    actions.addAll(writeRows(txn, keptIds, keptValues));
    TransactionCommitResult result = txn.commit(engine, CloseableIterable.inMemoryIterable(Iterators.of(actions)));
    return JSON.getNodeFactory().numberNode(result.getVersion());
  }

  /** Called with each data file of a scan, with the ids and values of its rows in file order. */
  private interface FileRows {
    void accept(Row scanFile, List<Long> ids, List<String> values) throws Exception;
  }

  private void forEachFileRows(Scan scan, FileRows visitor) throws Exception {
    TableData.forEachFile(
        engine,
        scan,
        scanFile -> {
          List<Long> ids = new ArrayList<>();
          List<String> values = new ArrayList<>();
          readFile(scan, scanFile, ids, values);
          visitor.accept(scanFile, ids, values);
        });
  }

  private void readFile(Scan scan, Row scanFile, List<Long> ids, List<String> values) throws Exception {
    TableData.forEachRow(
        engine,
        scan,
        scanFile,
        row -> {
          int idAt = row.getSchema().indexOf("id");
          int valueAt = row.getSchema().indexOf("value");
          ids.add(row.isNullAt(idAt) ? null : row.getLong(idAt));
          values.add(row.isNullAt(valueAt) ? null : row.getString(valueAt));
        });
  }

  private JsonNode checkpoint(JsonNode req) throws Exception {
    Snapshot snapshot = snapshot(resolve(req), Optional.empty(), Optional.empty());
    try {
      snapshot.writeCheckpoint(engine);
    } catch (CheckpointAlreadyExistsException e) {
      // already there: that version is checkpointed all the same
    } catch (KernelException e) {
      // Kernel declines (e.g. the snapshot has unpublished commits): no checkpoint. Whether it
      // wrote anything all the same is judged from the storage events, not from this answer.
      return NullNode.getInstance();
    }
    return JSON.getNodeFactory().numberNode(snapshot.getVersion());
  }

  private JsonNode read(JsonNode req) throws Exception {
    Snapshot snapshot = snapshot(resolve(req), optLong(req, "version"), optLong(req, "timestamp_ms"));
    ObjectNode out = JSON.createObjectNode().put("version", snapshot.getVersion());
    out.set("rows", rows(snapshot));
    return out;
  }

  /** Path access (profile delta-cm-path-access): the table by its location alone, no catalog. */
  private Snapshot pathSnapshot(JsonNode req) {
    return TableManager.loadSnapshot(req.path("location").asText()).build(engine);
  }

  private JsonNode appendPath(JsonNode req) throws Exception {
    Transaction txn = pathSnapshot(req).buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).build(engine);
    List<Long> ids = new ArrayList<>();
    List<String> values = new ArrayList<>();
    for (JsonNode row : req.path("rows")) {
      ids.add(row.path("id").asLong());
      values.add(row.path("value").isTextual() ? row.path("value").asText() : null);
    }
    List<Row> actions = writeRows(txn, ids, values);
    TransactionCommitResult result = txn.commit(engine, CloseableIterable.inMemoryIterable(Iterators.of(actions)));
    return JSON.getNodeFactory().numberNode(result.getVersion());
  }

  private ArrayNode rows(Snapshot snapshot) throws Exception {
    Scan scan = snapshot.getScanBuilder().build();
    ArrayNode rows = JSON.createArrayNode();
    forEachFileRows(
        scan,
        (scanFile, ids, values) -> {
          for (int i = 0; i < ids.size(); i++) {
            ObjectNode row = rows.addObject();
            row.put("id", ids.get(i));
            row.put("value", values.get(i));
          }
        });
    return rows;
  }

  @Override
  public void close() throws Exception {
    ucClient.close();
  }
}
