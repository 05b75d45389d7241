package lakecert.kernel;

import io.delta.kernel.data.ArrayValue;
import io.delta.kernel.data.MapValue;
import io.delta.kernel.data.Row;
import io.delta.kernel.internal.actions.SingleAction;
import io.delta.kernel.types.StructType;
import java.math.BigDecimal;

/**
 * An {@code add} action Kernel built for appended rows ({@code Transaction.generateAppendActions}),
 * read with {@code dataChange=false}: OPTIMIZE's rewritten file, which rearranges rows without
 * changing any. Kernel's public API has no way to ask for that flag; everything else about the add
 * (path, size, statistics, and what Kernel assigns at commit, such as row ids) stays Kernel's own.
 * The result is re-wrapped with Kernel's internal {@code
 * io.delta.kernel.internal.actions.SingleAction.createAddFileSingleAction}.
 */
final class QuietAdd implements Row {
  private final Row add;
  private final int dataChange;

  private QuietAdd(Row add) {
    this.add = add;
    this.dataChange = add.getSchema().indexOf("dataChange");
    if (dataChange < 0) {
      throw new IllegalStateException("Kernel's add action has no dataChange field: " + add.getSchema());
    }
  }

  /** The single-action row {@code action} (an append's add) with its add's dataChange false. */
  static Row of(Row action) {
    int at = action.getSchema().indexOf("add");
    if (at < 0 || action.isNullAt(at)) {
      throw new IllegalStateException("not an add action: " + action.getSchema());
    }
    return SingleAction.createAddFileSingleAction(new QuietAdd(action.getStruct(at)));
  }

  @Override
  public StructType getSchema() {
    return add.getSchema();
  }

  @Override
  public boolean isNullAt(int ordinal) {
    return ordinal != dataChange && add.isNullAt(ordinal);
  }

  @Override
  public boolean getBoolean(int ordinal) {
    return ordinal != dataChange && add.getBoolean(ordinal);
  }

  @Override
  public byte getByte(int ordinal) {
    return add.getByte(ordinal);
  }

  @Override
  public short getShort(int ordinal) {
    return add.getShort(ordinal);
  }

  @Override
  public int getInt(int ordinal) {
    return add.getInt(ordinal);
  }

  @Override
  public long getLong(int ordinal) {
    return add.getLong(ordinal);
  }

  @Override
  public float getFloat(int ordinal) {
    return add.getFloat(ordinal);
  }

  @Override
  public double getDouble(int ordinal) {
    return add.getDouble(ordinal);
  }

  @Override
  public String getString(int ordinal) {
    return add.getString(ordinal);
  }

  @Override
  public BigDecimal getDecimal(int ordinal) {
    return add.getDecimal(ordinal);
  }

  @Override
  public byte[] getBinary(int ordinal) {
    return add.getBinary(ordinal);
  }

  @Override
  public Row getStruct(int ordinal) {
    return add.getStruct(ordinal);
  }

  @Override
  public ArrayValue getArray(int ordinal) {
    return add.getArray(ordinal);
  }

  @Override
  public MapValue getMap(int ordinal) {
    return add.getMap(ordinal);
  }
}
