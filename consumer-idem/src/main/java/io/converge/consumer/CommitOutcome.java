package io.converge.consumer;

import io.converge.core.internal.Commits;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The commits seen on the current thread while a {@link Watch} is open: the successful ones, and those whose outcome
 * is unknown. Work that committed must never be released for a blind re-run, whatever failure follows it. A commit
 * that fails (the connection broke during {@code COMMIT}, the transaction manager's commit threw) may have committed,
 * so its work is not released either, whatever exception the application finally propagates or renders (a transaction
 * manager's rollback-after-commit failure, for one, replaces the commit's exception with a connection error that
 * looks like an ordinary outage).
 *
 * <p>Transaction managers report commits with {@link #reportCommitted()} and {@link #reportUnknown()}: Converge's
 * Spring integration does it for every Spring transaction manager bean (a {@code TransactionExecutionListener}), and
 * {@code TxnProducer.inTransaction} reports its commits, and those whose outcome is unknown, through
 * {@code io.converge.core.internal.Commits}. The
 * Idempotency-Key filter watches its handler's thread and never releases a key after a commit, successful or unknown
 * (see {@link Unavailability}). Writes in auto-commit mode outside any transaction are not seen.
 *
 * <p>A watch may carry a {@link Marker}: a write that a transaction manager runs on the watched thread's transaction
 * on the marker's {@link DataSource}, on that transaction's own connection, just before its {@code COMMIT}, so that the
 * write commits if and only if the work does. The Idempotency-Key filter marks its claim this way: a claim whose answer
 * was lost after its work committed is never run again. Converge's Spring integration runs the marker for every Spring
 * transaction manager bean whose transaction holds a JDBC connection of the marker's data source, and
 * {@code TxnProducer.inTransaction} for a producer on the marker's data source (through
 * {@code io.converge.core.internal.Commits.beforeCommit}).
 *
 * <p>Thread-confined: a watch sees the commits of the thread that opened it, and is closed by that thread.
 */
public final class CommitOutcome {

  private static final ThreadLocal<Watch> CURRENT = new ThreadLocal<>();

  private CommitOutcome() {
  }

  /** Starts watching the current thread's commits until the returned watch is closed (watches nest). */
  public static Watch watch() {
    return watch(null);
  }

  /**
   * Like {@link #watch()}, with {@code marker} (nullable) to be written by every transaction on its data source that
   * commits on this thread while the watch is open, just before its commit.
   */
  public static Watch watch(Marker marker) {
    return new Watch(marker);
  }

  /** The marker of the current thread's innermost watch that has one; null when none. */
  public static Marker marker() {
    for (Watch w = CURRENT.get(); w != null; w = w.outer) {
      if (w.marker != null) {
        return w.marker;
      }
    }
    return null;
  }

  /**
   * A write that commits if and only if the watched work commits: run by a transaction manager on the connection of a
   * transaction on {@link #dataSource()}, just before its {@code COMMIT}. If it throws, the transaction must not
   * commit (the transaction manager rolls it back).
   */
  public interface Marker {

    /** The data source whose transactions carry the marker. */
    DataSource dataSource();

    /** Writes the marker on {@code transaction}, the committing transaction's connection (not to be closed). */
    void mark(Connection transaction) throws SQLException;
  }

  /** True when the current thread has an open watch. */
  public static boolean watched() {
    return CURRENT.get() != null;
  }

  /** Reports a successful commit on the current thread; every open watch of the thread sees it. */
  public static void reportCommitted() {
    for (Watch w = CURRENT.get(); w != null; w = w.outer) {
      w.committed = true;
      w.markPending = false;
    }
  }

  /** Reports a commit on the current thread whose outcome is unknown; every open watch of the thread sees it. */
  public static void reportUnknown() {
    for (Watch w = CURRENT.get(); w != null; w = w.outer) {
      w.unknown = true;
      w.unmarkedUnknown |= !w.markPending; // the failed commit wrote no marker of this watch
      w.markPending = false;
    }
  }

  /**
   * A {@code TxnProducer} unit's commit of unknown outcome ({@code CommitOutcomeUnknownException}: its connection broke,
   * the database did not refuse it), reported to every open watch of the thread.
   */
  private static void reportConnectionLost() {
    reportUnknown();
    for (Watch w = CURRENT.get(); w != null; w = w.outer) {
      w.connectionLost = true;
    }
  }

  /** The commits of one thread between {@link #watch()} and {@link #close()}; not thread-safe (thread-confined). */
  public static final class Watch implements AutoCloseable {

    private final Watch outer;
    /** The producer's observer this watch replaced, restored on close. */
    private final Runnable replacedObserver;
    /** The watch's marker, counting its writes; null when none. */
    private final Marker marker;
    /** The producer's pre-commit write this watch replaced, restored on close. */
    private final Commits.BeforeCommit replacedWrite;
    /** The producer's observer of unknown outcomes this watch replaced, restored on close. */
    private final Runnable replacedUnknownObserver;
    /** A commit of unknown outcome was reported whose connection broke (not refused by the database). */
    private boolean connectionLost;
    private boolean unknown;
    private boolean committed;
    /** The marker was written by a transaction whose outcome was not reported yet. */
    private boolean markPending;
    /** A commit whose outcome is unknown was reported of a transaction that wrote no marker. */
    private boolean unmarkedUnknown;

    /** Opens the watch on the current thread: it observes the thread's commits and writes {@code marker} (nullable). */
    private Watch(Marker marker) {
      outer = CURRENT.get();
      this.marker = marker == null ? null : new Counting(marker, this);
      replacedObserver = Commits.observe(CommitOutcome::reportCommitted);
      replacedUnknownObserver = Commits.observeOutcomeUnknown(CommitOutcome::reportConnectionLost);
      replacedWrite = Commits.beforeCommit(null);
      // a watch without a marker keeps the enclosing watch's pre-commit write
      Commits.beforeCommit(this.marker == null ? replacedWrite : this::markBeforeCommit);
      CURRENT.set(this);
    }

    private void markBeforeCommit(DataSource dataSource, Connection connection) throws SQLException {
      if (dataSource == marker.dataSource()) {
        marker.mark(connection);
      }
    }

    /** True when a commit succeeded while this watch was open. */
    public boolean sawCommit() {
      return committed;
    }

    /** True when a commit whose outcome is unknown was reported while this watch was open. */
    public boolean sawUnknownOutcome() {
      return unknown;
    }

    /**
     * True when a commit whose outcome is unknown was reported because its connection broke before the database
     * answered (a {@code TxnProducer} unit's {@code CommitOutcomeUnknownException}): the work may have committed, and
     * the database did not refuse it, whatever exception the application propagates afterwards.
     */
    public boolean sawConnectionLostAtCommit() {
      return connectionLost;
    }

    /**
     * True when the commit whose outcome is unknown wrote this watch's marker, so that the marker tells whether it
     * committed: every unknown outcome reported was of a transaction that had written it, or none was reported and the
     * last transaction that wrote it reported no outcome. False when a commit of unknown outcome wrote no marker (a
     * transaction manager that is not a Spring bean, another data source, JTA): nothing can tell whether it committed.
     */
    public boolean unknownOutcomeMarked() {
      return !unmarkedUnknown && (unknown || markPending);
    }

    /** Stops watching (the enclosing watch, if any, becomes current again). */
    @Override
    public void close() {
      Commits.observe(replacedObserver);
      Commits.observeOutcomeUnknown(replacedUnknownObserver);
      Commits.beforeCommit(replacedWrite);
      if (outer == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(outer);
      }
    }
  }

  /** {@code marker}, noting on {@code watch} each time it is written. */
  private record Counting(Marker marker, Watch watch) implements Marker {

    @Override
    public DataSource dataSource() {
      return marker.dataSource();
    }

    @Override
    public void mark(Connection transaction) throws SQLException {
      marker.mark(transaction);
      watch.markPending = true;
    }
  }
}
