package io.converge.producer.spi;

import io.converge.producer.OutgoingMessage;
import java.sql.Connection;

/**
 * The backend's part of one unit of work. Used by one thread. The producer calls, in order:
 * {@link #publish} for each message (inside the DB transaction), then exactly one of
 * {@link #afterCommit()} (the DB transaction committed) or {@link #afterRollback()} (it rolled back);
 * neither when the commit's outcome is unknown: recovery then resolves the messages from the log.
 */
public interface BackendTransaction {

  /**
   * Publishes {@code message} as part of the transaction of {@code connection}: e.g. sends a half
   * message and records it in the transaction log on {@code connection}.
   */
  void publish(OutgoingMessage message, Connection connection) throws Exception;

  /**
   * The unit of work is about to commit on {@code connection}: finish what {@link #publish} started
   * (e.g. await the broker's acknowledgements of pipelined sends, write deferred log rows in one
   * batch). Throwing rolls the DB transaction back. Default: nothing.
   */
  default void beforeCommit(Connection connection) throws Exception {
  }

  /**
   * The log write that {@link #beforeCommit} left for last, for the producer to send with the DB
   * commit ({@link CommitWrite}): called right after {@link #beforeCommit}, when at least one message
   * was published; the producer writes it before the commit or in the commit's round trip, and the
   * unit commits only if it succeeded. Default: none.
   */
  default CommitWrite commitWrite() {
    return null;
  }

  /**
   * A savepoint of the DB transaction was rolled back: the messages this transaction published after
   * its first {@code kept} belong to the rolled-back work and must never be delivered, whatever the
   * transaction does next; the first {@code kept} stay part of it (delivered iff it commits). Log rows
   * written on the connection after the savepoint go with it: already gone in {@code inTransaction}
   * (called after the JDBC rollback), about to go in Spring (its {@code savepointRollback} callback
   * runs just before the JDBC rollback); do not write on the connection here. Called on the unit's
   * thread, before {@link #beforeCommit}; throwing rolls the whole DB transaction back.
   *
   * <p>Messages are counted by the {@link #publish} calls that returned normally: a publish that threw
   * is not part of the transaction (an application may catch the exception and go on, e.g. after a
   * savepoint rollback), so a backend discards at once whatever such a call left on the broker.
   *
   * @param kept how many of the messages published so far survive (0 to all of them but the last)
   */
  void rollbackToSavepoint(int kept) throws Exception;

  /** The DB transaction committed: make the messages visible. Must not throw; recovery is the fallback. */
  void afterCommit();

  /** The DB transaction rolled back: discard the messages. Must not throw; recovery is the fallback. */
  void afterRollback();
}
