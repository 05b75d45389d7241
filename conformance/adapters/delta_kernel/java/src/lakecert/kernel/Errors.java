package lakecert.kernel;

import io.delta.kernel.commit.CommitFailedException;
import io.delta.kernel.exceptions.ConcurrentWriteException;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.unitycatalog.client.ApiException;
import java.lang.reflect.InvocationTargetException;

/**
 * The contract's error classes, from what Kernel and the UC client throw (by class, never by text).
 *
 * <p>{@code "harness"}: lakecert's driver does not fit the loaded jars (its compat layer could not
 * make a call, or a class or method it was compiled against is missing: a {@link LinkageError}
 * anywhere in the chain, or a {@link ReflectiveOperationException} that is not merely carrying
 * what the called code threw). That is never Kernel's answer, so it is checked before anything else: a
 * conflict wrapped around it must not make a harness failure look like Kernel refusing a commit.
 */
final class Errors {
  private Errors() {}

  static String kind(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof KernelCompat.HarnessError || c instanceof LinkageError) {
        return "harness";
      }
      if (c instanceof ReflectiveOperationException && !(c instanceof InvocationTargetException)) {
        // a class or member lakecert's code looked up is not there (ClassNotFoundException,
        // NoSuchMethodException, ...); an InvocationTargetException only carries what the called
        // code threw, which its cause (next in the chain) says
        return "harness";
      }
    }
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
