package io.converge.producer.spi;

/**
 * Tells an observer of the current thread that a unit of work committed: {@code TxnProducer.inTransaction} calls
 * {@link #committed()} right after its successful database commit. Converge's Idempotency-Key filter observes its
 * handler's thread this way, so that it never releases a key for a retry once work was committed. Thread-confined:
 * each thread has at most one observer; with none a commit costs a thread-local read.
 */
public final class Commits {

  private static final ThreadLocal<Runnable> OBSERVER = new ThreadLocal<>();

  private Commits() {
  }

  /** Sets the current thread's observer ({@code null} removes it); returns the one it replaces, or {@code null}. */
  public static Runnable observe(Runnable observer) {
    Runnable previous = OBSERVER.get();
    if (observer == null) {
      OBSERVER.remove();
    } else {
      OBSERVER.set(observer);
    }
    return previous;
  }

  /** Reports a successful commit on the current thread to its observer, if any. */
  public static void committed() {
    Runnable observer = OBSERVER.get();
    if (observer != null) {
      observer.run();
    }
  }
}
