package io.converge.consumer.internal;

import io.converge.consumer.TransactionRunner;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/** {@link TransactionRunner#jdbc}: one connection per transaction, READ COMMITTED, auto-commit off. */
public final class JdbcTransactionRunner implements TransactionRunner {

  private final DataSource dataSource;

  /** Transactions on {@code dataSource}. */
  public JdbcTransactionRunner(DataSource dataSource) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  @Override
  public <T> T inTransaction(Work<T> work) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      int isolation = c.getTransactionIsolation();
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
