package lakecert.kernel;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.engine.ExpressionHandler;
import io.delta.kernel.engine.FileReadRequest;
import io.delta.kernel.engine.FileReadResult;
import io.delta.kernel.engine.FileSystemClient;
import io.delta.kernel.engine.JsonHandler;
import io.delta.kernel.engine.MetricsReporter;
import io.delta.kernel.engine.ParquetHandler;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.DataFileStatus;
import io.delta.kernel.utils.FileStatus;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Kernel's default engine, with every write, copy and delete announced once it has happened. All of
 * Kernel's I/O goes through its {@link Engine}, so this is where a connector observes it.
 */
final class ObservedEngine implements Engine {
  /**
   * lakecert's own tests only (a faulty variant, never a product setting): commit files written on
   * this thread overwrite a version another writer already wrote, as a store without put-if-absent
   * would, so the checks must catch the lost commit on the Kernel path.
   */
  static final ThreadLocal<Boolean> FAULT_OVERWRITE_COMMITS = ThreadLocal.withInitial(() -> false);

  private static final java.util.regex.Pattern COMMIT_FILE =
      java.util.regex.Pattern.compile(".*/_delta_log/\\d{20}\\.json$");

  private final Engine inner;
  private final Driver.Announcer announcer;

  ObservedEngine(Engine inner, Driver.Announcer announcer) {
    this.inner = inner;
    this.announcer = announcer;
  }

  private long size(String path) {
    try {
      return inner.getFileSystemClient().getFileStatus(path).getSize();
    } catch (IOException e) {
      return -1;
    }
  }

  private void put(String path, boolean ifAbsent) {
    announcer.announce("put", path, size(path), ifAbsent);
  }

  @Override
  public ExpressionHandler getExpressionHandler() {
    return inner.getExpressionHandler();
  }

  @Override
  public List<MetricsReporter> getMetricsReporters() {
    return inner.getMetricsReporters();
  }

  @Override
  public JsonHandler getJsonHandler() {
    JsonHandler json = inner.getJsonHandler();
    return new JsonHandler() {
      @Override
      public ColumnarBatch parseJson(
          ColumnVector jsonStringVector, StructType outputSchema, Optional<ColumnVector> selectionVector) {
        return json.parseJson(jsonStringVector, outputSchema, selectionVector);
      }

      @Override
      public CloseableIterator<ColumnarBatch> readJsonFiles(
          CloseableIterator<FileStatus> fileIter, StructType physicalSchema, Optional<Predicate> predicate)
          throws IOException {
        return json.readJsonFiles(fileIter, physicalSchema, predicate);
      }

      @Override
      public void writeJsonFileAtomically(String filePath, CloseableIterator<Row> data, boolean overwrite)
          throws IOException {
        boolean replace = overwrite || (FAULT_OVERWRITE_COMMITS.get() && COMMIT_FILE.matcher(filePath).matches());
        json.writeJsonFileAtomically(filePath, data, replace);
        put(filePath, !replace);
      }
    };
  }

  @Override
  public ParquetHandler getParquetHandler() {
    ParquetHandler parquet = inner.getParquetHandler();
    return new ParquetHandler() {
      @Override
      public CloseableIterator<FileReadResult> readParquetFiles(
          CloseableIterator<FileStatus> fileIter, StructType physicalSchema, Optional<Predicate> predicate)
          throws IOException {
        return parquet.readParquetFiles(fileIter, physicalSchema, predicate);
      }

      @Override
      public CloseableIterator<DataFileStatus> writeParquetFiles(
          String directoryPath, CloseableIterator<FilteredColumnarBatch> dataIter, List<Column> statsColumns)
          throws IOException {
        // Drained here, so that each file is announced once written and before anything commits it.
        List<DataFileStatus> written = new ArrayList<>();
        try (CloseableIterator<DataFileStatus> files =
            parquet.writeParquetFiles(directoryPath, dataIter, statsColumns)) {
          while (files.hasNext()) {
            DataFileStatus file = files.next();
            written.add(file);
            announcer.announce("put", file.getPath(), file.getSize(), true);
          }
        }
        return Iterators.of(written);
      }

      @Override
      public void writeParquetFileAtomically(String filePath, CloseableIterator<FilteredColumnarBatch> data)
          throws IOException {
        parquet.writeParquetFileAtomically(filePath, data);
        put(filePath, true);
      }
    };
  }

  @Override
  public FileSystemClient getFileSystemClient() {
    FileSystemClient fs = inner.getFileSystemClient();
    return new FileSystemClient() {
      @Override
      public CloseableIterator<FileStatus> listFrom(String filePath) throws IOException {
        return fs.listFrom(filePath);
      }

      @Override
      public String resolvePath(String path) throws IOException {
        return fs.resolvePath(path);
      }

      @Override
      public CloseableIterator<ByteArrayInputStream> readFiles(CloseableIterator<FileReadRequest> readRequests)
          throws IOException {
        return fs.readFiles(readRequests);
      }

      @Override
      public boolean mkdirs(String path) throws IOException {
        return fs.mkdirs(path);
      }

      @Override
      public boolean delete(String path) throws IOException {
        boolean deleted = fs.delete(path);
        if (deleted) {
          announcer.announce("delete", path, -1, false);
        }
        return deleted;
      }

      @Override
      public FileStatus getFileStatus(String path) throws IOException {
        return fs.getFileStatus(path);
      }

      @Override
      public void copyFileAtomically(String srcPath, String destPath, boolean overwrite) throws IOException {
        fs.copyFileAtomically(srcPath, destPath, overwrite);
        put(destPath, !overwrite);
      }
    };
  }
}
