package lakecert.kernel;

import io.delta.kernel.DataWriteContext;
import io.delta.kernel.Scan;
import io.delta.kernel.Transaction;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.data.ScanStateRow;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.DataFileStatus;
import io.delta.kernel.utils.FileStatus;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reading and writing a table's rows through Kernel's public scan and transaction API, the way
 * Kernel's own examples do: what the client (KernelClient) and the conflict engine (ConflictEngine)
 * both need.
 */
final class TableData {
  private TableData() {}

  /** Called with each scan file of a scan, then with each logical row of a file. */
  interface Visitor<T> {
    void accept(T value) throws Exception;
  }

  /** Each scan file (an add action with its deletion vector) of ``scan``, in Kernel's order. */
  static void forEachFile(Engine engine, Scan scan, Visitor<Row> onFile) throws Exception {
    try (CloseableIterator<FilteredColumnarBatch> scanFiles = scan.getScanFiles(engine)) {
      while (scanFiles.hasNext()) {
        try (CloseableIterator<Row> fileRows = scanFiles.next().getRows()) {
          while (fileRows.hasNext()) {
            onFile.accept(fileRows.next());
          }
        }
      }
    }
  }

  /** The logical rows of one scan file of ``scan`` (deletion vectors applied by Kernel). */
  static void forEachRow(Engine engine, Scan scan, Row scanFile, Visitor<Row> onRow) throws Exception {
    Row scanState = scan.getScanState(engine);
    StructType physicalSchema = ScanStateRow.getPhysicalDataReadSchema(scanState);
    FileStatus file = InternalScanFileUtils.getAddFileStatus(scanFile);
    CloseableIterator<ColumnarBatch> physical =
        engine.getParquetHandler()
            .readParquetFiles(Iterators.of(List.of(file)), physicalSchema, Optional.empty())
            .map(r -> r.getData());
    try (CloseableIterator<FilteredColumnarBatch> data =
        Scan.transformPhysicalData(engine, scanState, scanFile, physical)) {
      while (data.hasNext()) {
        try (CloseableIterator<Row> rows = data.next().getRows()) {
          while (rows.hasNext()) {
            onRow.accept(rows.next());
          }
        }
      }
    }
  }

  /** The add actions of ``rows`` written as new data files of ``txn``'s (unpartitioned) table. */
  static List<Row> appendActions(Engine engine, Transaction txn, ColumnarBatch rows) throws Exception {
    List<Row> actions = new ArrayList<>();
    Row state = txn.getTransactionState(engine);
    Map<String, Literal> partition = Collections.emptyMap();
    FilteredColumnarBatch batch = new FilteredColumnarBatch(rows, Optional.empty());
    CloseableIterator<FilteredColumnarBatch> physical =
        Transaction.transformLogicalData(engine, state, Iterators.of(List.of(batch)), partition);
    DataWriteContext ctx = Transaction.getWriteContext(engine, state, partition);
    CloseableIterator<DataFileStatus> files =
        engine.getParquetHandler()
            .writeParquetFiles(ctx.getTargetDirectory(), physical, ctx.getStatisticsColumns());
    try (CloseableIterator<Row> adds = Transaction.generateAppendActions(engine, state, files, ctx)) {
      while (adds.hasNext()) {
        actions.add(adds.next());
      }
    }
    return actions;
  }
}
