package io.converge.broker.internal;

/**
 * Closing several resources so that one failing to close does not keep the others open: the first failure is
 * kept, every later one is suppressed in it. Used by {@code DevPlatform} and the benchmarks' teardown; not for
 * users. Stateless.
 */
public final class Closeables {

  private Closeables() {
  }

  /**
   * Closes each of {@code resources} in their order, even after one failed to close; then throws the first
   * failure, the later ones suppressed in it.
   */
  public static void closeAll(Iterable<? extends AutoCloseable> resources) throws Exception {
    Exception failure = closeAll(resources, null);
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Closes each of {@code resources} in their order, even after one failed to close, and returns what failed:
   * {@code failure} when it is not null (every failure to close suppressed in it), else the first failure to
   * close (the later ones suppressed in it), else null.
   *
   * @param failure what already went wrong (the resources are being closed because of it), or null
   */
  public static Exception closeAll(Iterable<? extends AutoCloseable> resources, Exception failure) {
    Exception first = failure;
    for (AutoCloseable r : resources) {
      try {
        r.close();
      } catch (Exception e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    return first;
  }
}
