package lakecert.kernel;

import io.delta.kernel.commit.CatalogCommitter;
import io.delta.kernel.commit.CommitFailedException;
import io.delta.kernel.commit.CommitMetadata;
import io.delta.kernel.commit.CommitResponse;
import io.delta.kernel.commit.Committer;
import io.delta.kernel.commit.PublishFailedException;
import io.delta.kernel.commit.PublishMetadata;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.utils.CloseableIterator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The hold of profile delta-row-conflicts: a {@link Committer} (Kernel's public seam for where a
 * commit goes) that parks the transaction's first commit attempt until lakecert releases it, then
 * hands it to the table's own committer. Whatever Kernel does next (a taken version, its conflict
 * checker, a rebase and a retry) is Kernel's own; retries are not held again.
 *
 * <p>On a catalog-managed table the wrapped committer is Kernel's UC committer (a {@link
 * CatalogCommitter}): the hold is then at the moment Kernel would propose the commit to the catalog,
 * and the wrapper stays a catalog committer ({@link Catalog}) so Kernel treats the table as it would.
 */
class HeldCommitter implements Committer {
  private final Committer inner;
  private final CountDownLatch parked = new CountDownLatch(1);
  private final CountDownLatch released = new CountDownLatch(1);
  // every version Kernel tried to commit at, in order (a taken version shows as a retry at the next)
  private final java.util.List<Long> attempts = new java.util.concurrent.CopyOnWriteArrayList<>();

  HeldCommitter(Committer inner) {
    this.inner = inner;
  }

  /** The hold around {@code inner}, a catalog committer too when {@code inner} is one. */
  static HeldCommitter around(Committer inner) {
    return inner instanceof CatalogCommitter ? new Catalog((CatalogCommitter) inner) : new HeldCommitter(inner);
  }

  /** A held catalog committer: publication and the table properties it needs are the inner one's. */
  static final class Catalog extends HeldCommitter implements CatalogCommitter {
    private final CatalogCommitter catalog;

    Catalog(CatalogCommitter inner) {
      super(inner);
      this.catalog = inner;
    }

    @Override
    public java.util.Map<String, String> getRequiredTableProperties() {
      return catalog.getRequiredTableProperties();
    }

    @Override
    public void publish(Engine engine, PublishMetadata metadata) throws PublishFailedException {
      catalog.publish(engine, metadata);
    }
  }

  @Override
  public CommitResponse commit(Engine engine, CloseableIterator<Row> actions, CommitMetadata metadata)
      throws CommitFailedException {
    attempts.add(metadata.getVersion());
    if (parked.getCount() > 0) {
      parked.countDown();
      try {
        released.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("the held commit was interrupted", e);
      }
    }
    return inner.commit(engine, actions, metadata);
  }

  /** Wait (a hang guard) until the commit is parked; false if it was not within the time. */
  boolean awaitParked(long millis) throws InterruptedException {
    return parked.await(millis, TimeUnit.MILLISECONDS);
  }

  java.util.List<Long> attempts() {
    return attempts;
  }

  void release() {
    released.countDown();
  }
}
