import io.delta.kernel.DataWriteContext;
import io.delta.kernel.Operation;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.actions.AddFile;
import io.delta.kernel.internal.actions.SingleAction;
import io.delta.kernel.internal.data.ScanStateRow;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterable;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.DataFileStatus;
import io.delta.kernel.utils.FileStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;

/**
 * delta-io/delta#7163 by hand: two copy-on-write DELETEs built on one snapshot, of different rows
 * stored in the same data file. Each removes that file and adds a file with the rows it keeps.
 * The second commit finds its version taken; Kernel's conflict checking then decides.
 *
 * <p>A Kernel that compares the winner's removes with its own (4.4.0 and later) refuses the
 * second commit with ConcurrentWriteException. One that does not (4.3.1) rebases it onto the next
 * version: both commits succeed, the shared file is removed twice, and each DELETE's kept file
 * brings back the row the other one deleted. Both deletes are lost.
 *
 * <p>Removes are built with Kernel's internal action classes (AddFile.toRemoveFileRow,
 * SingleAction.createRemoveFileSingleAction), as Kernel's connectors build them; Kernel's public
 * API builds adds only. No lakecert code is used. Usage: java -cp JARS:. Repro [TABLE_DIR]
 */
public final class Repro {
  private static final StructType SCHEMA = new StructType().add("id", StringType.STRING, true);

  public static void main(String[] args) throws Exception {
    Path dir = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("kernel-7163-");
    String table = dir.toUri().toString();
    Engine engine = DefaultEngine.create(new Configuration());
    String version = Snapshot.class.getPackage().getImplementationVersion();
    System.out.println("delta-kernel-api " + version + ", table " + table);

    // v0: the table; v1: one data file holding rows a and b
    TableManager.buildCreateTableTransaction(table, SCHEMA, "repro")
        .build(engine)
        .commit(engine, CloseableIterable.emptyIterable());
    Transaction setup =
        TableManager.loadSnapshot(table).build(engine).buildUpdateTableTransaction("repro", Operation.WRITE).build(engine);
    commit(engine, setup, append(engine, setup, List.of("a", "b")));
    Snapshot start = TableManager.loadSnapshot(table).build(engine);
    System.out.println("v" + start.getVersion() + " holds " + rows(engine, start) + " in one data file");

    // Both DELETEs start from the same snapshot (v1), before either commits.
    Transaction deleteA = start.buildUpdateTableTransaction("repro", Operation.WRITE).build(engine);
    List<Row> actionsA = deleteCopyOnWrite(engine, start, deleteA, "a");
    Transaction deleteB = start.buildUpdateTableTransaction("repro", Operation.WRITE).build(engine);
    List<Row> actionsB = deleteCopyOnWrite(engine, start, deleteB, "b");

    List<String> deleted = new ArrayList<>(); // the rows of the DELETEs that committed
    System.out.println("DELETE id=a commits: v" + commit(engine, deleteA, actionsA));
    deleted.add("a");
    try {
      System.out.println("DELETE id=b commits: v" + commit(engine, deleteB, actionsB));
      deleted.add("b");
    } catch (Exception e) {
      System.out.println("DELETE id=b refused: " + e.getClass().getName());
    }
    Snapshot end = TableManager.loadSnapshot(table).build(engine);
    List<String> left = rows(engine, end);
    System.out.println("v" + end.getVersion() + " holds " + left);
    List<String> back = new ArrayList<>(deleted);
    back.retainAll(left);
    System.out.println(
        back.isEmpty()
            ? "OK: no row a committed DELETE removed is in the table"
            : "BUG: rows removed by committed DELETEs are in the table: " + back);
  }

  private static long commit(Engine engine, Transaction txn, List<Row> actions) {
    return txn.commit(engine, CloseableIterable.inMemoryIterable(iterator(actions))).getVersion();
  }

  /** Remove every file holding {@code id} and write its other rows into a new file. */
  private static List<Row> deleteCopyOnWrite(Engine engine, Snapshot snapshot, Transaction txn, String id)
      throws Exception {
    List<Row> actions = new ArrayList<>();
    List<String> kept = new ArrayList<>();
    Scan scan = snapshot.getScanBuilder().build();
    for (Row file : scanFiles(engine, scan)) {
      List<String> values = fileRows(engine, scan, file);
      if (!values.contains(id)) {
        continue;
      }
      AddFile add = new AddFile(file.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL));
      Row remove = add.toRemoveFileRow(true, Optional.of(System.currentTimeMillis()));
      actions.add(SingleAction.createRemoveFileSingleAction(remove));
      values.stream().filter(v -> !v.equals(id)).forEach(kept::add);
    }
    if (!kept.isEmpty()) {
      actions.addAll(append(engine, txn, kept));
    }
    return actions;
  }

  /** Add actions of {@code values} written as a new data file of {@code txn}'s table. */
  private static List<Row> append(Engine engine, Transaction txn, List<String> values) throws Exception {
    Row state = txn.getTransactionState(engine);
    Map<String, Literal> noPartition = Collections.emptyMap();
    FilteredColumnarBatch batch = new FilteredColumnarBatch(new Strings(values), Optional.empty());
    CloseableIterator<FilteredColumnarBatch> physical =
        Transaction.transformLogicalData(engine, state, iterator(List.of(batch)), noPartition);
    DataWriteContext ctx = Transaction.getWriteContext(engine, state, noPartition);
    CloseableIterator<DataFileStatus> written =
        engine.getParquetHandler().writeParquetFiles(ctx.getTargetDirectory(), physical, ctx.getStatisticsColumns());
    List<Row> adds = new ArrayList<>();
    try (CloseableIterator<Row> it = Transaction.generateAppendActions(engine, state, written, ctx)) {
      it.forEachRemaining(adds::add);
    }
    return adds;
  }

  private static List<Row> scanFiles(Engine engine, Scan scan) throws Exception {
    List<Row> files = new ArrayList<>();
    try (CloseableIterator<FilteredColumnarBatch> batches = scan.getScanFiles(engine)) {
      while (batches.hasNext()) {
        try (CloseableIterator<Row> it = batches.next().getRows()) {
          it.forEachRemaining(files::add);
        }
      }
    }
    return files;
  }

  private static List<String> fileRows(Engine engine, Scan scan, Row file) throws Exception {
    Row scanState = scan.getScanState(engine);
    StructType physicalSchema = ScanStateRow.getPhysicalDataReadSchema(scanState);
    FileStatus status = InternalScanFileUtils.getAddFileStatus(file);
    CloseableIterator<ColumnarBatch> data =
        engine.getParquetHandler()
            .readParquetFiles(iterator(List.of(status)), physicalSchema, Optional.empty())
            .map(r -> r.getData());
    List<String> out = new ArrayList<>();
    try (CloseableIterator<FilteredColumnarBatch> logical = Scan.transformPhysicalData(engine, scanState, file, data)) {
      while (logical.hasNext()) {
        try (CloseableIterator<Row> it = logical.next().getRows()) {
          it.forEachRemaining(r -> out.add(r.getString(0)));
        }
      }
    }
    return out;
  }

  private static List<String> rows(Engine engine, Snapshot snapshot) throws Exception {
    Scan scan = snapshot.getScanBuilder().build();
    List<String> out = new ArrayList<>();
    for (Row file : scanFiles(engine, scan)) {
      out.addAll(fileRows(engine, scan, file));
    }
    Collections.sort(out);
    return out;
  }

  private static <T> CloseableIterator<T> iterator(List<T> items) {
    java.util.Iterator<T> it = items.iterator();
    return new CloseableIterator<T>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public T next() {
        return it.next();
      }

      @Override
      public void close() {}
    };
  }

  /** One string column as a Kernel columnar batch. */
  private static final class Strings implements ColumnarBatch {
    private final List<String> values;

    Strings(List<String> values) {
      this.values = values;
    }

    @Override
    public StructType getSchema() {
      return SCHEMA;
    }

    @Override
    public int getSize() {
      return values.size();
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
          return values.size();
        }

        @Override
        public void close() {}

        @Override
        public boolean isNullAt(int rowId) {
          return values.get(rowId) == null;
        }

        @Override
        public String getString(int rowId) {
          return values.get(rowId);
        }
      };
    }
  }
}
