package io.converge.producer.internal;

import io.converge.core.CommitOutcomeUnknownException;
import io.converge.core.ConvergeException;
import io.converge.core.DatabaseRefusedException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.PayloadTooLargeException;
import io.converge.producer.UnitTooLargeException;
import io.converge.core.TransactionTimedOutException;
import io.converge.producer.TxnContext;
import io.converge.producer.TxnProducerBuilder.Settings;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.CommitWrite;
import io.converge.core.internal.DatabaseErrors;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One unit of work's messages on its connection, whoever opened the transaction ({@code inTransaction}
 * or a joined one): the context handed to the unit, the backend transaction and the pending count. Not
 * thread-safe (one unit, one thread).
 */
final class UnitContext implements TxnContext, SavepointConnection.Unit {

  private static final Logger LOG = LoggerFactory.getLogger(UnitContext.class);
  private static final String LOG_FAILURE = "Cannot record the messages of a unit of work in the transaction log";

  /** A call into the backend transaction, which may throw anything. */
  @FunctionalInterface
  private interface BackendCall {

    void run() throws Exception;
  }

  private final Settings settings;
  private final Connection connection;
  private final Connection exposed;
  private final BackendTransaction btx;
  private String lastId;
  private int published;
  /** The payload bytes of the published messages, in publish order (the first {@link #published}). */
  private int[] sizes = new int[16];
  /** The sum of the first {@link #published} sizes. */
  private long publishedBytes;
  /** A savepoint rollback failed: the messages and the rows may disagree, so the unit must not commit. */
  private boolean broken;

  /** The producer group of the unit. */
  String group() {
    return settings.group();
  }

  UnitContext(Settings settings, Connection connection, BackendTransaction btx) {
    this.settings = settings;
    this.connection = connection;
    this.btx = btx;
    this.exposed = SavepointConnection.wrap(connection, this);
  }

  @Override
  public Connection connection() {
    return exposed;
  }

  @Override
  public int published() {
    return published;
  }

  /** The id of the last message published, for the errors of the unit; null before the first. */
  String lastId() {
    return lastId;
  }

  /** A savepoint was rolled back: the messages published after the first {@code kept} go with it. */
  @Override
  public void rollbackTo(int kept) {
    if (kept < 0 || kept > published) {
      throw new IllegalArgumentException("kept must be between 0 and " + published + ", but was " + kept);
    }
    if (kept == published) {
      return;
    }
    boolean wasBroken = broken;
    broken = true; // until the backend discarded them; a caller may catch the failure and carry on
    call(() -> btx.rollbackToSavepoint(kept), null,
        "Cannot discard the messages published after a rolled-back savepoint", lastId);
    broken = wasBroken; // an earlier failure stays: the unit cannot commit
    settings.metrics().pending(kept - published);
    for (int i = kept; i < published; i++) {
      publishedBytes -= sizes[i];
    }
    LOG.debug("Savepoint rolled back in group {}: {} of {} messages discarded", settings.group(), published - kept,
        published);
    published = kept;
  }

  /**
   * Lets the backend finish its messages before the DB commit, then fails the unit when it ran longer
   * than the local-transaction timeout since {@code startNanos}; a failure rolls the unit back.
   *
   * @param what how the timeout's message names the unit, e.g. {@code "Unit of work"}
   * @param since what {@code startNanos} was, for that message (empty, or e.g. {@code " after its first publish"})
   * @return the backend's last log write, to be written before the commit or with it; null for none
   */
  CommitWrite beforeCommit(long startNanos, String what, String since) {
    if (broken) {
      throw new ConvergeException("A savepoint rollback of group " + settings.group() + " failed to discard its"
          + " messages; the transaction cannot commit and is rolled back as a whole", lastId, null);
    }
    CommitWrite write = null;
    if (published > 0) {
      call(() -> btx.beforeCommit(connection), LOG_FAILURE, "Cannot complete the messages of a unit of work", lastId);
      write = btx.commitWrite();
    }
    if (System.nanoTime() - startNanos > settings.localTransactionTimeout().toNanos()) {
      if (write != null) {
        // a check-back that fenced a message meanwhile is the more precise reason: the write says so
        CommitWrite late = write;
        call(() -> late.write(connection), LOG_FAILURE, "Cannot record the messages of a unit of work", lastId);
      }
      throw new TransactionTimedOutException(what + " of group " + settings.group() + " ran longer than "
          + settings.localTransactionTimeout() + since + "; rolled back", lastId, null);
    }
    CrashPoints.pass(CrashPoints.Point.BEFORE_DB_COMMIT);
    return write;
  }

  /** Writes {@code write} before a commit that its owner sends (a joined transaction). */
  void write(CommitWrite write) {
    call(() -> write.write(connection), LOG_FAILURE, "Cannot record the messages of a unit of work", lastId);
  }

  /**
   * Writes {@code write} and commits in one round trip ({@code inTransaction}).
   *
   * @return null when the unit committed; else the failure, after which nothing was committed and the
   *     caller rolls back
   * @throws CommitOutcomeUnknownException when the error may have come after the COMMIT ran (see
   *     {@link #refusedBeforeCommit}): the outcome is unknown
   */
  RuntimeException writeAndCommit(CommitWrite write) {
    try {
      write.writeAndCommit(connection);
      return null;
    } catch (ConvergeException e) {
      return e; // the write refused the commit (a fenced message): nothing was sent after it
    } catch (SQLException e) {
      if (refusedBeforeCommit(e.getSQLState())) {
        return new DatabaseRefusedException("Commit of a unit of work of group " + settings.group()
            + " refused; nothing was committed", lastId, e.getSQLState(), e);
      }
      throw new CommitOutcomeUnknownException("Commit of a unit of work of group " + settings.group()
          + " failed; its messages will be resolved from the transaction log", lastId, e);
    } catch (RuntimeException e) {
      throw new CommitOutcomeUnknownException("Commit of a unit of work of group " + settings.group()
          + " failed; its messages will be resolved from the transaction log", lastId, e);
    }
  }

  /**
   * True when {@code sqlState} says the transaction was refused as a whole, so its COMMIT became a ROLLBACK: a
   * statement sent before the COMMIT failed (data 22, constraint 23, invalid transaction state 25, syntax or
   * access 42, check option 44, a lock timeout 55P03, e.g. on an outbox key's lock; a
   * statement timeout or cancel, 57014, stays unknown: it may be reported for a COMMIT that ran),
   * or the commit itself was refused for a serialization failure or deadlock (40). Every other error may have been raised after the COMMIT ran (57P01 from a shutdown or
   * {@code pg_terminate_backend}, a PANIC's XX000 or 58030 on a WAL fsync, a connection failure 08, none at
   * all): the outcome is unknown, and a unit whose commit may have happened is never rolled back on the broker.
   */
  static boolean refusedBeforeCommit(String sqlState) {
    if (sqlState == null || sqlState.length() < 2) {
      return false;
    }
    if (sqlState.equals("55P03")) {
      return true; // lock_not_available (lock_timeout): a lock waited for by a statement, never after the COMMIT ran
    }
    return switch (sqlState.substring(0, 2)) {
      case "22", "23", "25", "40", "42", "44" -> true;
      default -> false;
    };
  }

  /** The transaction committed: the backend completes the messages. */
  void afterCommit() {
    CrashPoints.pass(CrashPoints.Point.AFTER_DB_COMMIT);
    btx.afterCommit();
    settings.metrics().pending(-published);
  }

  /** The transaction rolled back: the backend discards the messages. */
  void afterRollback() {
    btx.afterRollback();
    settings.metrics().pending(-published);
  }

  @Override
  public String publish(OutgoingMessage unsigned) {
    OutgoingMessage message = settings.signingKeys() == null ? unsigned : unsigned.signedWith(settings.signingKeys());
    if (message.payload().length > settings.maxPayloadBytes()) {
      throw new PayloadTooLargeException("Payload of message " + message.id() + " is " + message.payload().length
          + " bytes, over the limit of " + settings.maxPayloadBytes(), message.id(), null);
    }
    refuseOverUnitLimits(message);
    lastId = message.id();
    try (PublishSpan span = PublishSpan.start(settings.tracing(), settings.backend().name(), message)) {
      try {
        call(() -> btx.publish(span.message(), connection), "Cannot record message " + message.id()
            + " in the transaction log", "Cannot publish message " + message.id(), message.id());
      } catch (RuntimeException e) {
        span.failed(e);
        throw e;
      }
    }
    if (published == sizes.length) {
      sizes = Arrays.copyOf(sizes, published * 2);
    }
    sizes[published++] = message.payload().length;
    publishedBytes += message.payload().length;
    settings.metrics().pending(1);
    return message.id();
  }

  /** Every backend holds the unit's messages until it ends: a unit over the limits fails instead of the heap. */
  private void refuseOverUnitLimits(OutgoingMessage message) {
    if (published >= settings.maxUnitMessages()) {
      LOG.warn("Message {} refused: its unit of work in group {} already published {} messages, the most allowed"
          + " (producer.maxUnitMessages)", message.id(), settings.group(), published);
      throw new UnitTooLargeException("Message " + message.id() + " would be message " + (published + 1)
          + " of its unit of work, over the limit of " + settings.maxUnitMessages() + " (producer.maxUnitMessages);"
          + " nothing of it was published", message.id(), null);
    }
    if (publishedBytes + message.payload().length > settings.maxUnitBytes()) {
      LOG.warn("Message {} refused: its unit of work in group {} would publish {} payload bytes, over {}"
          + " (producer.maxUnitBytes)", message.id(), settings.group(), publishedBytes + message.payload().length,
          settings.maxUnitBytes());
      throw new UnitTooLargeException("Message " + message.id() + " (" + message.payload().length + " bytes) would"
          + " take its unit of work to " + (publishedBytes + message.payload().length) + " payload bytes, over the"
          + " limit of " + settings.maxUnitBytes() + " (producer.maxUnitBytes); nothing of it was published",
          message.id(), null);
    }
  }

  /**
   * Runs {@code call}: a {@code RuntimeException} passes as it is, an {@code SQLException} becomes (unless
   * {@code databaseFailure} is null) a {@link io.converge.core.DatabaseUnavailableException} saying
   * {@code databaseFailure} when the connection was lost or refused, else a {@link DatabaseRefusedException} with
   * its SQLState ({@link DatabaseErrors}: an aborted transaction, a constraint, a lock or statement timeout is a
   * failure of the unit, not an outage); anything else a {@link ConvergeException} saying {@code failure}; all
   * carry {@code messageId}.
   */
  private static void call(BackendCall call, String databaseFailure, String failure, String messageId) {
    try {
      call.run();
    } catch (RuntimeException e) {
      throw e;
    } catch (SQLException e) {
      throw databaseFailure == null ? new ConvergeException(failure, messageId, e)
          : DatabaseErrors.translate(databaseFailure, messageId, e);
    } catch (Exception e) {
      throw new ConvergeException(failure, messageId, e);
    }
  }
}
