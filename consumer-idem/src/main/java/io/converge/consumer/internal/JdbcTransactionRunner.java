package io.converge.consumer.internal;

import io.converge.consumer.TransactionRunner;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * {@link TransactionRunner#jdbc}: one connection per transaction, READ COMMITTED, auto-commit off.
 * The isolation of the first connections is read until one reports READ COMMITTED; from then on the
 * data source is trusted to hand out READ COMMITTED connections (a pool of one configuration does).
 */
public final class JdbcTransactionRunner implements TransactionRunner {

  private final DataSource dataSource;
  // The PostgreSQL driver answers getTransactionIsolation() with a query to the server: once the
  // pool's connections are known to default to READ COMMITTED, the hot path skips that round trip.
  private volatile boolean readCommittedByDefault;

  /** Transactions on {@code dataSource}. */
  public JdbcTransactionRunner(DataSource dataSource) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  @Override
  public <T> T inTransaction(Work<T> work) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      int isolation = Connection.TRANSACTION_READ_COMMITTED;
      if (!readCommittedByDefault) {
        isolation = c.getTransactionIsolation();
        readCommittedByDefault = isolation == Connection.TRANSACTION_READ_COMMITTED;
      }
      c.setAutoCommit(false);
      if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      }
      try {
        T result = work.run(c);
        c.commit();
        return result;
      } catch (Throwable e) {
        try {
          c.rollback();
        } catch (SQLException rollbackFailure) {
          e.addSuppressed(rollbackFailure);
        }
        throw e;
      } finally {
        restore(c, autoCommit, isolation);
      }
    }
  }

  private static void restore(Connection c, boolean autoCommit, int isolation) {
    try {
      if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
        c.setTransactionIsolation(isolation);
      }
      c.setAutoCommit(autoCommit);
    } catch (SQLException ignored) {
      // the connection is closed next; a pool discards a broken one
    }
  }
}
