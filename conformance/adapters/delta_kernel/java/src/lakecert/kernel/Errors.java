package lakecert.kernel;

import io.delta.kernel.commit.CommitFailedException;
import io.delta.kernel.exceptions.ConcurrentWriteException;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.unitycatalog.client.ApiException;

/** The contract's error classes, from what Kernel and the UC client throw (by class, never by text). */
final class Errors {
  private Errors() {}

  static String kind(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof ConcurrentWriteException) {
        return "conflict"; // Kernel lost the race and would not (or could not) rebase
      }
      if (c instanceof CommitFailedException) {
        return ((CommitFailedException) c).isConflict() ? "conflict" : "rejected";
      }
      if (c instanceof TableNotFoundException) {
        return "not_found";
      }
      if (c instanceof ApiException) {
        int code = ((ApiException) c).getCode();
        if (code == 404) {
          return "not_found";
        }
        if (code == 409) {
          return "conflict";
        }
        if (code >= 400 && code < 500) {
          return "invalid";
        }
      }
    }
    return "error";
  }
}
