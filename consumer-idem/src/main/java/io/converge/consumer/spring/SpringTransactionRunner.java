package io.converge.consumer.spring;

import io.converge.consumer.TransactionRunner;
import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;

/**
 * Runs each delivery in a new Spring transaction (REQUIRES_NEW, READ COMMITTED) and hands the handler
 * the transaction's connection, so that {@code JdbcTemplate} and other Spring-managed access in the
 * handler join the same transaction as the dedup claim.
 */
final class SpringTransactionRunner implements TransactionRunner {

  private final PlatformTransactionManager transactionManager;
  private final DataSource dataSource;
  private final TransactionDefinition definition;

  SpringTransactionRunner(PlatformTransactionManager transactionManager, DataSource dataSource) {
    this.transactionManager = transactionManager;
    this.dataSource = dataSource;
    org.springframework.transaction.support.DefaultTransactionDefinition d = new org.springframework.transaction.support.DefaultTransactionDefinition(
        TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    d.setIsolationLevel(TransactionDefinition.ISOLATION_READ_COMMITTED);
    d.setName("converge-consumer");
    this.definition = d;
  }

  @Override
  public <T> T inTransaction(Work<T> work) throws Exception {
    TransactionStatus status = transactionManager.getTransaction(definition);
    T result;
    try {
      Connection c = DataSourceUtils.getConnection(dataSource);
      try {
        result = work.run(c);
      } finally {
        DataSourceUtils.releaseConnection(c, dataSource);
      }
    } catch (Throwable e) {
      try {
        transactionManager.rollback(status);
      } catch (RuntimeException rollbackFailure) {
        e.addSuppressed(rollbackFailure);
      }
      throw e;
    }
    transactionManager.commit(status);
    return result;
  }
}
