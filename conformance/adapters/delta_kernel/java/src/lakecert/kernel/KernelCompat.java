package lakecert.kernel;

import io.delta.kernel.Snapshot;
import io.delta.kernel.commit.Committer;
import io.delta.kernel.unitycatalog.UCCatalogManagedClient;
import io.delta.kernel.unitycatalog.UCTableIdentifier;
import io.delta.storage.commit.uccommitcoordinator.UCClient;
import java.io.File;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.security.CodeSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * The one place where the driver bridges differences between the Delta Kernel releases it runs on
 * (4.3.1, 4.4.0 and 4.4.1, whose {@code delta-kernel-api} is paired with the 4.4.0 defaults and
 * unitycatalog modules), so that one source tree compiles against each and runs on each. Only the
 * calls that differ go through reflection here; everything else is called directly.
 *
 * <ul>
 *   <li>{@code Snapshot.getCommitter()}: in the public {@code Snapshot} interface from 4.4.0; in
 *       4.3.1 only {@code io.delta.kernel.internal.SnapshotImpl} has it (public method).
 *   <li>{@code UCCatalogManagedClient.createUCCommitter}: 4.3.1 has the three-argument form only
 *       (client, table id, table path), and its {@code loadSnapshot} calls that; 4.4.0 adds a
 *       four-argument form (with the {@code UCTableIdentifier}) and {@code loadSnapshot} calls that
 *       one. The driver's subclass declares both; calling the four-argument super method needs a
 *       special-invocation handle, since 4.3.1 would not compile a direct {@code super} call.
 * </ul>
 *
 * <p>Anything that goes wrong in here (a method missing from the loaded jars, a class that does not
 * link) is lakecert's build against the wrong jars, never Kernel's answer: it is raised as {@link
 * HarnessError}, which {@link Errors} classifies as {@code "harness"}. An exception Kernel itself
 * throws from a reflectively called method is unwrapped and rethrown as Kernel's.
 */
final class KernelCompat {
  private KernelCompat() {}

  /** lakecert's compat layer could not make a call on the loaded Kernel jars (not a Kernel answer). */
  static final class HarnessError extends RuntimeException {
    HarnessError(String what, Throwable cause) {
      super(what + ": " + cause, cause);
    }
  }

  /** The committer of {@code snapshot} (public API from 4.4.0; the implementation's in 4.3.1). */
  static Committer committerOf(Snapshot snapshot) {
    Method method;
    try {
      method = Snapshot.class.getMethod("getCommitter");
    } catch (NoSuchMethodException absentFromInterface) { // 4.3.1
      try {
        method = snapshot.getClass().getMethod("getCommitter");
      } catch (NoSuchMethodException | LinkageError e) {
        throw new HarnessError("no getCommitter() on " + snapshot.getClass().getName(), e);
      }
    } catch (LinkageError e) {
      throw new HarnessError("Snapshot.getCommitter()", e);
    }
    return (Committer) invoke(method, snapshot);
  }

  /**
   * {@code UCCatalogManagedClient}'s own four-argument {@code createUCCommitter} (4.4.0 and later)
   * on {@code self}, not the subclass's override: {@code lookup} must be the subclass's own.
   */
  static Committer superUCCommitter(
      MethodHandles.Lookup lookup,
      UCCatalogManagedClient self,
      UCClient client,
      String tableId,
      String tablePath,
      UCTableIdentifier id) {
    MethodHandle handle;
    try {
      MethodType type =
          MethodType.methodType(Committer.class, UCClient.class, String.class, String.class, UCTableIdentifier.class);
      handle = lookup.findSpecial(UCCatalogManagedClient.class, "createUCCommitter", type, lookup.lookupClass());
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new HarnessError("UCCatalogManagedClient.createUCCommitter(UCClient, String, String, UCTableIdentifier)", e);
    }
    try {
      return (Committer) handle.invoke(self, client, tableId, tablePath, id);
    } catch (RuntimeException | Error e) {
      throw e; // Kernel's own (or the JVM's): not wrapped
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }

  private static Object invoke(Method method, Object target, Object... args) {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      Throwable thrown = e.getCause(); // Kernel's own exception: rethrown as Kernel's
      if (thrown instanceof RuntimeException) {
        throw (RuntimeException) thrown;
      }
      if (thrown instanceof Error) {
        throw (Error) thrown;
      }
      throw new IllegalStateException(thrown);
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new HarnessError(method.toString(), e);
    }
  }

  // The jars whose versions the driver reports, each by a class only it ships.
  private static final String[][] COMPONENTS = {
    {"delta-kernel-api", "io.delta.kernel.Snapshot"},
    {"delta-kernel-defaults", "io.delta.kernel.defaults.engine.DefaultEngine"},
    {"delta-kernel-unitycatalog", "io.delta.kernel.unitycatalog.UCCatalogManagedClient"},
    {"delta-storage", "io.delta.storage.LogStore"},
    {"unitycatalog-client", "io.unitycatalog.client.ApiClient"},
  };

  /** The version of each component actually loaded, read from its jar; "unknown" when it cannot be read. */
  static Map<String, String> components() {
    Map<String, String> out = new LinkedHashMap<>();
    for (String[] component : COMPONENTS) {
      out.put(component[0], versionOf(component[1]));
    }
    return out;
  }

  private static String versionOf(String className) {
    Class<?> cls;
    try {
      cls = Class.forName(className, false, KernelCompat.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      return "unknown";
    }
    // The jar's own manifest first: a package split over several jars would give the first one's.
    CodeSource source = cls.getProtectionDomain().getCodeSource();
    URL location = source == null ? null : source.getLocation();
    if (location != null && "file".equals(location.getProtocol()) && location.getPath().endsWith(".jar")) {
      try (JarFile jar = new JarFile(new File(location.toURI()))) {
        Manifest manifest = jar.getManifest();
        String v = manifest == null ? null : manifest.getMainAttributes().getValue("Implementation-Version");
        if (v != null && !v.isBlank()) {
          return v.trim();
        }
      } catch (Exception e) {
        // unreadable: fall through to the package's record of the same manifest
      }
    }
    Package p = cls.getPackage();
    String v = p == null ? null : p.getImplementationVersion();
    return v == null || v.isBlank() ? "unknown" : v.trim();
  }
}
