package io.converge.consumer;

import io.converge.consumer.internal.JdbcTransactionRunner;
import java.sql.Connection;
import javax.sql.DataSource;

/**
 * Runs work in one database transaction: commit when the work returns, roll back when it throws
 * (and rethrow). The default opens a connection from a {@link DataSource}; the Spring binding uses
 * Spring's transaction manager so that {@code JdbcTemplate} calls in the handler join the transaction.
 * Implementations are thread-safe. Transactions must run at READ COMMITTED (PostgreSQL's default):
 * a concurrent claim then waits on the unique index and sees the winner's row.
 */
public interface TransactionRunner {

  /** Work on the transaction's connection; must not commit, roll back or close it. */
  @FunctionalInterface
  interface Work<T> {

    /** Does the work. */
    T run(Connection connection) throws Exception;
  }

  /** Runs {@code work} in a new transaction and returns its result. */
  <T> T inTransaction(Work<T> work) throws Exception;

  /** Plain JDBC on {@code dataSource}: one connection per transaction, auto-commit off. */
  static TransactionRunner jdbc(DataSource dataSource) {
    return new JdbcTransactionRunner(dataSource);
  }
}
