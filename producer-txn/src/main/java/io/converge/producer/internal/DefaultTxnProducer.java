package io.converge.producer.internal;

import io.converge.core.CommitOutcomeUnknownException;
import io.converge.core.ConvergeException;
import io.converge.core.DatabaseRefusedException;
import io.converge.core.DatabaseUnavailableException;
import io.converge.producer.TxnProducer;
import io.converge.producer.TxnProducerBuilder.Settings;
import io.converge.producer.UnitOfWork;
import io.converge.producer.UnitOfWorkException;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.CommitWrite;
import io.converge.core.internal.Commits;
import io.converge.producer.spi.JoinableProducer;
import io.converge.producer.spi.JoinedTransaction;
import io.converge.producer.spi.TxnBackend;
import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.PurgeSchedule;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one implementation of {@link TxnProducer}; the backend does the broker's part, a
 * {@link UnitContext} carries each unit's messages. Joins foreign transactions ({@link JoinableProducer}).
 * Thread-safe.
 */
public final class DefaultTxnProducer implements TxnProducer, JoinableProducer {

  private static final Logger LOG = LoggerFactory.getLogger(DefaultTxnProducer.class);
  private static final int PURGE_BATCH = 1000;

  private final Settings settings;
  private final TxnLog log;
  private final TxnBackend backend;
  private final PurgeSchedule purger;
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Starts the backend (and the log purge) for {@code settings}. */
  public DefaultTxnProducer(Settings settings) {
    this.settings = settings;
    this.log = new TxnLog(settings.dataSource(), settings.logRetention());
    this.backend = settings.backend().create(new BackendContext(settings.group(), settings.dataSource(), log,
        settings.localTransactionTimeout(), settings.topics(), settings.metrics(), settings.clock(),
        settings.tracing()));
    this.purger = settings.purgeInterval().isZero() ? null
        : PurgeSchedule.start("converge-txn-log-purge-" + settings.group(), settings.purgeInterval(),
            () -> log.purge(settings.group(), PURGE_BATCH));
  }

  @Override
  public <T> T inTransaction(UnitOfWork<T> work) {
    requireOpen();
    Connection c;
    try {
      c = settings.dataSource().getConnection();
    } catch (SQLException e) {
      throw DatabaseErrors.translate("No database connection for a unit of work of group " + settings.group(),
          null, e);
    }
    long start = System.nanoTime();
    UnitContext ctx = null;
    try {
      ctx = new UnitContext(settings, c, backend.begin());
      T result;
      CommitWrite write;
      try {
        c.setAutoCommit(false);
        result = work.run(ctx);
        write = ctx.beforeCommit(start, "Unit of work", "");
        Commits.beforeCommit(settings.dataSource(), c); // e.g. the Idempotency-Key claim's marker, before COMMIT
      } catch (Throwable e) {
        rollback(c, ctx);
        throw rethrow(e, ctx);
      }
      try {
        if (write == null) {
          c.commit();
        } else {
          // the last log write travels with the COMMIT: one round trip; a refused write committed nothing
          RuntimeException refused = ctx.writeAndCommit(write);
          if (refused != null) {
            rollback(c, ctx);
            throw refused;
          }
        }
      } catch (SQLException e) {
        if (UnitContext.refusedBeforeCommit(e.getSQLState())) {
          // the database refused the COMMIT (e.g. a deferred constraint): it rolled back, a failure of the unit
          rollback(c, ctx);
          throw new DatabaseRefusedException("Commit of a unit of work of group " + settings.group()
              + " refused; nothing was committed", ctx.lastId(), e.getSQLState(), e);
        }
        // the outcome is unknown: leave the messages open, the backend's recovery reads the log
        Commits.outcomeUnknown();
        throw new CommitOutcomeUnknownException("Commit of a unit of work of group " + settings.group()
            + " failed; its messages will be resolved from the transaction log", ctx.lastId(), e);
      } catch (CommitOutcomeUnknownException e) {
        // the unit may have committed: the observer (the Idempotency-Key filter) must not release its work
        Commits.outcomeUnknown();
        throw e;
      }
      Commits.committed();
      ctx.afterCommit();
      return result;
    } finally {
      closeQuietly(c);
    }
  }

  private void requireOpen() {
    if (closed.get()) {
      throw new ConvergeException("TxnProducer of group " + settings.group() + " is closed");
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

  private static void rollback(Connection c, UnitContext ctx) {
    try {
      c.rollback();
    } catch (SQLException e) {
      // the connection is broken: the server rolls back when it drops it
      LOG.debug("Rollback failed: {}", e.toString());
    }
    ctx.afterRollback();
  }

  private static RuntimeException rethrow(Throwable e, UnitContext ctx) {
    if (e instanceof RuntimeException r) {
      return r;
    }
    if (e instanceof Error err) {
      throw err;
    }
    if (e instanceof SQLException sql && DatabaseErrors.outageIn(sql) != null) {
      return new DatabaseUnavailableException("Database connection lost in a unit of work: " + sql.getMessage(),
          ctx.lastId(), sql);
    }
    return new UnitOfWorkException("Unit of work failed and was rolled back: " + e, ctx.lastId(), e);
  }

  @Override
  public JoinedTransaction join(Connection connection) {
    requireOpen();
    return new JoinedUnit(new UnitContext(settings, connection, backend.begin()));
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
        purger.close();
      }
      backend.close();
    }
  }
}
