package lakecert.kernel;

import io.delta.kernel.utils.CloseableIterator;
import java.util.Iterator;
import java.util.List;

/** Kernel's closeable iterators over in-memory lists. */
final class Iterators {
  private Iterators() {}

  static <T> CloseableIterator<T> of(List<T> items) {
    Iterator<T> it = items.iterator();
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
}
