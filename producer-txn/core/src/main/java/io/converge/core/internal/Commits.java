package io.converge.core.internal;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Tells an observer of the current thread that a unit of work committed: {@code TxnProducer.inTransaction} calls
 * {@link #committed()} right after its successful database commit, and {@link #outcomeUnknown()} when its commit
 * failed with an unknown outcome (it throws {@code CommitOutcomeUnknownException}: the unit may have committed).
 * Converge's Idempotency-Key filter observes its handler's thread this way, so that it never releases a key for a
 * retry once work was, or may have been, committed, whatever the handler does after it. Thread-confined: each thread
 * has at most one observer of each kind; with none a commit costs a thread-local read.
 */
public final class Commits {

  private static final ThreadLocal<Runnable> OBSERVER = new ThreadLocal<>();
  private static final ThreadLocal<BeforeCommit> BEFORE_COMMIT = new ThreadLocal<>();
  private static final ThreadLocal<Runnable> UNKNOWN_OBSERVER = new ThreadLocal<>();

  /**
   * A write on a unit's own connection just before its {@code COMMIT}, so that it commits if and only if the unit
   * does (the Idempotency-Key filter marks its claim this way). Throwing rolls the unit back.
   */
  @FunctionalInterface
  public interface BeforeCommit {

    /** Runs on {@code connection}, the unit's (not to be closed), of {@code dataSource}, the producer's. */
    void run(DataSource dataSource, Connection connection) throws SQLException;
  }

  /** Sets the current thread's pre-commit write ({@code null} removes it); returns the one it replaces, or null. */
  public static BeforeCommit beforeCommit(BeforeCommit write) {
    return swap(BEFORE_COMMIT, write);
  }

  /** Runs the current thread's pre-commit write, if any, on a unit's connection right before its commit. */
  public static void beforeCommit(DataSource dataSource, Connection connection) throws SQLException {
    BeforeCommit write = BEFORE_COMMIT.get();
    if (write != null) {
      write.run(dataSource, connection);
    }
  }

  private Commits() {
  }

  /** Sets the current thread's observer ({@code null} removes it); returns the one it replaces, or {@code null}. */
  public static Runnable observe(Runnable observer) {
    return swap(OBSERVER, observer);
  }

  /**
   * Sets the current thread's observer of commits whose outcome is unknown ({@code null} removes it); returns the one
   * it replaces, or {@code null}.
   */
  public static Runnable observeOutcomeUnknown(Runnable observer) {
    return swap(UNKNOWN_OBSERVER, observer);
  }

  /**
   * Reports a commit whose outcome is unknown on the current thread (the connection broke during {@code COMMIT}: the
   * unit may have committed) to its observer, if any; called before {@code CommitOutcomeUnknownException} is thrown.
   */
  public static void outcomeUnknown() {
    Runnable observer = UNKNOWN_OBSERVER.get();
    if (observer != null) {
      observer.run();
    }
  }

  /** Sets {@code slot} to {@code value} ({@code null} removes it); returns the value it replaces, or null. */
  private static <T> T swap(ThreadLocal<T> slot, T value) {
    T previous = slot.get();
    if (value == null) {
      slot.remove();
    } else {
      slot.set(value);
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
