package io.converge.producer.internal;

import io.converge.producer.CommitOutcomeUnknownException;
import io.converge.producer.ConvergeException;
import io.converge.producer.DatabaseUnavailableException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.PayloadTooLargeException;
import io.converge.producer.TransactionTimedOutException;
import io.converge.producer.TxnContext;
import io.converge.producer.TxnProducer;
import io.converge.producer.TxnProducerBuilder.Settings;
import io.converge.producer.UnitOfWork;
import io.converge.producer.UnitOfWorkException;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.Commits;
import io.converge.producer.spi.CrashPoints;
import io.converge.producer.spi.TxnBackend;
import io.converge.producer.spi.TxnLog;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The one implementation of {@link TxnProducer}; the backend does the broker's part. Thread-safe. */
public final class DefaultTxnProducer implements TxnProducer {

  private static final Logger LOG = LoggerFactory.getLogger(DefaultTxnProducer.class);
  private static final int PURGE_BATCH = 1000;

  private final Settings settings;
  private final TxnLog log;
  private final TxnBackend backend;
  private final ScheduledExecutorService purger;
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Starts the backend (and the log purge) for {@code settings}. */
  public DefaultTxnProducer(Settings settings) {
    this.settings = settings;
    this.log = new TxnLog(settings.dataSource(), settings.logRetention());
    this.backend = settings.backend().create(new BackendContext(settings.group(), settings.dataSource(), log,
        settings.localTransactionTimeout(), settings.topics(), settings.metrics(), settings.clock()));
    if (settings.purgeInterval().isZero()) {
      this.purger = null;
    } else {
      this.purger = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "converge-txn-log-purge-" + settings.group());
        t.setDaemon(true);
        return t;
      });
      long every = settings.purgeInterval().toMillis();
      purger.scheduleWithFixedDelay(this::purgeQuietly, every, every, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public <T> T inTransaction(UnitOfWork<T> work) {
    if (closed.get()) {
      throw new ConvergeException("TxnProducer of group " + settings.group() + " is closed");
    }
    Connection c;
    try {
      c = settings.dataSource().getConnection();
    } catch (SQLException e) {
      throw new DatabaseUnavailableException("No database connection for a unit of work of group " + settings.group(), null, e);
    }
    long start = System.nanoTime();
    Context ctx = null;
    try {
      ctx = new Context(c, backend.begin());
      T result;
      try {
        c.setAutoCommit(false);
        result = work.run(ctx);
        ctx.beforeCommit();
        if (System.nanoTime() - start > settings.localTransactionTimeout().toNanos()) {
          throw new TransactionTimedOutException("Unit of work of group " + settings.group() + " ran longer than "
              + settings.localTransactionTimeout() + "; rolled back", ctx.lastId, null);
        }
        CrashPoints.pass(CrashPoints.Point.BEFORE_DB_COMMIT);
      } catch (Throwable e) {
        rollback(c, ctx.btx, ctx);
        throw rethrow(e, ctx);
      }
      try {
        c.commit();
      } catch (SQLException e) {
        // the outcome is unknown: leave the messages open, the backend's recovery reads the log
        throw new CommitOutcomeUnknownException("Commit of a unit of work of group " + settings.group()
            + " failed; its messages will be resolved from the transaction log", ctx.lastId, e);
      }
      Commits.committed();
      CrashPoints.pass(CrashPoints.Point.AFTER_DB_COMMIT);
      ctx.btx.afterCommit();
      settings.metrics().pending(-ctx.published);
      return result;
    } finally {
      closeQuietly(c);
    }
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException e) {
      // after commit or rollback: nothing is left to lose; the pool discards a broken connection
      LOG.debug("Closing a connection failed: {}", e.toString());
    }
  }

  private void rollback(Connection c, BackendTransaction btx, Context ctx) {
    try {
      c.rollback();
    } catch (SQLException e) {
      // the connection is broken: the server rolls back when it drops it
      LOG.debug("Rollback failed: {}", e.toString());
    }
    btx.afterRollback();
    settings.metrics().pending(-ctx.published);
  }

  private static RuntimeException rethrow(Throwable e, Context ctx) {
    if (e instanceof RuntimeException r) {
      return r;
    }
    if (e instanceof Error err) {
      throw err;
    }
    if (e instanceof SQLException sql && isConnectionFailure(sql)) {
      return new DatabaseUnavailableException("Database connection lost in a unit of work: " + sql.getMessage(), ctx.lastId, sql);
    }
    return new UnitOfWorkException("Unit of work failed and was rolled back: " + e, ctx.lastId, e);
  }

  /** SQLSTATE class 08 (connection exception) or 57P (operator intervention: server shutting down). */
  private static boolean isConnectionFailure(SQLException e) {
    String state = e.getSQLState();
    return state != null && (state.startsWith("08") || state.startsWith("57P"));
  }

  private void purgeQuietly() {
    try {
      long n = log.purge(settings.group(), PURGE_BATCH);
      if (n > 0) {
        LOG.debug("Purged {} transaction-log rows of group {}", n, settings.group());
      }
    } catch (RuntimeException e) {
      LOG.warn("Transaction-log purge of group {} failed: {}", settings.group(), e.toString());
    }
  }

  /**
   * Joins a transaction that someone else opened and will end (e.g. Spring's) on {@code connection}:
   * publish through the returned context, then call {@link Joined#completed(boolean)} once it ended.
   */
  public Joined join(Connection connection) {
    if (closed.get()) {
      throw new ConvergeException("TxnProducer of group " + settings.group() + " is closed");
    }
    return new Joined(new Context(connection, backend.begin()));
  }

  /** A transaction joined by {@link #join(Connection)}. Used by one thread. */
  public final class Joined {
    private final Context ctx;
    private final long start = System.nanoTime();

    private Joined(Context ctx) {
      this.ctx = ctx;
    }

    /**
     * The joined transaction is about to commit: fails it when it ran past the local-transaction
     * timeout (counted from the first publish).
     *
     * @throws TransactionTimedOutException to make the transaction roll back
     */
    public void beforeCommit() {
      ctx.beforeCommit();
      if (System.nanoTime() - start > settings.localTransactionTimeout().toNanos()) {
        throw new TransactionTimedOutException("Transaction of group " + settings.group() + " ran longer than "
            + settings.localTransactionTimeout() + " after its first publish; rolled back", ctx.lastId, null);
      }
      CrashPoints.pass(CrashPoints.Point.BEFORE_DB_COMMIT);
    }

    /** How many messages were published in the joined transaction so far (a savepoint's mark). */
    public int published() {
      return ctx.published;
    }

    /**
     * A savepoint of the joined transaction was rolled back: the messages published after the first
     * {@code kept} are discarded and never delivered.
     *
     * @param kept {@link #published()} when the savepoint was set; 0 when it was set before the first publish
     * @throws ConvergeException when the backend cannot discard them (roll the whole transaction back)
     */
    public void rollbackToSavepoint(int kept) {
      ctx.rollbackTo(kept);
    }

    /** Publishes {@code message} in the joined transaction (see {@link TxnContext#publish}). */
    public String publish(OutgoingMessage message) {
      return ctx.publish(message);
    }

    /** The joined transaction ended: committed or rolled back. */
    public void completed(boolean committed) {
      if (committed) {
        CrashPoints.pass(CrashPoints.Point.AFTER_DB_COMMIT);
        ctx.btx.afterCommit();
      } else {
        ctx.btx.afterRollback();
      }
      settings.metrics().pending(-ctx.published);
    }
  }

  /** Deletes this group's transaction-log rows older than the retention now; returns how many. */
  public long purgeLog() {
    return log.purge(settings.group(), PURGE_BATCH);
  }

  @Override
  public String group() {
    return settings.group();
  }

  @Override
  public String backend() {
    return settings.backend().name();
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      if (purger != null) {
        purger.shutdownNow();
      }
      backend.close();
    }
  }

  /** The context handed to the unit of work. Not thread-safe (one unit, one thread). */
  private final class Context implements TxnContext, SavepointConnection.Unit {
    private final Connection connection;
    private final Connection exposed;
    private final BackendTransaction btx;
    private String lastId;
    private int published;
    /** A savepoint rollback failed: the messages and the rows may disagree, so the unit must not commit. */
    private boolean broken;

    Context(Connection connection, BackendTransaction btx) {
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
      try {
        btx.rollbackToSavepoint(kept);
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new ConvergeException("Cannot discard the messages published after a rolled-back savepoint", lastId, e);
      }
      broken = wasBroken; // an earlier failure stays: the unit cannot commit
      settings.metrics().pending(kept - published);
      LOG.debug("Savepoint rolled back in group {}: {} of {} messages discarded", settings.group(), published - kept, published);
      published = kept;
    }

    /** Lets the backend finish its messages before the DB commit; a failure rolls the unit back. */
    void beforeCommit() {
      if (broken) {
        throw new ConvergeException("A savepoint rollback of group " + settings.group() + " failed to discard its"
            + " messages; the transaction cannot commit and is rolled back as a whole", lastId, null);
      }
      if (published == 0) {
        return;
      }
      try {
        btx.beforeCommit(connection);
      } catch (RuntimeException e) {
        throw e;
      } catch (SQLException e) {
        throw new DatabaseUnavailableException("Cannot record the messages of a unit of work in the transaction log", lastId, e);
      } catch (Exception e) {
        throw new ConvergeException("Cannot complete the messages of a unit of work", lastId, e);
      }
    }

    @Override
    public String publish(OutgoingMessage message) {
      if (message.payload().length > settings.maxPayloadBytes()) {
        throw new PayloadTooLargeException("Payload of message " + message.id() + " is " + message.payload().length
            + " bytes, over the limit of " + settings.maxPayloadBytes(), message.id(), null);
      }
      lastId = message.id();
      try {
        btx.publish(message, connection);
      } catch (RuntimeException e) {
        throw e;
      } catch (SQLException e) {
        throw new DatabaseUnavailableException("Cannot record message " + message.id() + " in the transaction log", message.id(), e);
      } catch (Exception e) {
        throw new ConvergeException("Cannot publish message " + message.id(), message.id(), e);
      }
      published++;
      settings.metrics().pending(1);
      return message.id();
    }
  }
}
