package lakecert.kernel;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructType;
import java.util.List;

/** The suite's rows ({@code id: long, value: string}) as a Kernel columnar batch. */
final class RowsBatch implements ColumnarBatch {
  static final StructType SCHEMA =
      new StructType().add("id", LongType.LONG, true).add("value", StringType.STRING, true);

  private final List<Long> ids;
  private final List<String> values;

  RowsBatch(List<Long> ids, List<String> values) {
    this.ids = ids;
    this.values = values;
  }

  @Override
  public StructType getSchema() {
    return SCHEMA;
  }

  @Override
  public int getSize() {
    return ids.size();
  }

  @Override
  public ColumnVector getColumnVector(int ordinal) {
    List<?> column = ordinal == 0 ? ids : values;
    DataType type = ordinal == 0 ? LongType.LONG : StringType.STRING;
    return new ColumnVector() {
      @Override
      public DataType getDataType() {
        return type;
      }

      @Override
      public int getSize() {
        return column.size();
      }

      @Override
      public void close() {}

      @Override
      public boolean isNullAt(int rowId) {
        return column.get(rowId) == null;
      }

      @Override
      public long getLong(int rowId) {
        return ids.get(rowId);
      }

      @Override
      public String getString(int rowId) {
        return values.get(rowId);
      }
    };
  }
}
