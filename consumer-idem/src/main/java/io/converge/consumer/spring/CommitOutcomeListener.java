package io.converge.consumer.spring;

import io.converge.consumer.CommitOutcome;
import java.sql.SQLException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.datasource.JdbcTransactionObjectSupport;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Reports to {@link CommitOutcome} every Spring commit of a watched thread: a successful one, and one that failed
 * (its outcome is unknown). Spring tells a failed
 * commit by {@code afterCommit} with a failure (a {@code TransactionException}) or, when the transaction manager
 * translated the failure (Spring Boot's {@code JdbcTransactionManager}: a {@code DataAccessException}), by
 * {@code afterRollback} after {@code beforeCommit}. Only commits on a watched thread are tracked.
 */
final class CommitOutcomeListener implements TransactionExecutionListener {

  private static final ThreadLocal<Set<TransactionExecution>> COMMITTING = new ThreadLocal<>();

  @Override
  public void beforeCommit(TransactionExecution transaction) {
    if (CommitOutcome.watched()) {
      // first the marker: when it cannot be written the transaction is rolled back, no commit was attempted
      mark(transaction, CommitOutcome.marker());
      Set<TransactionExecution> committing = COMMITTING.get();
      if (committing == null) {
        committing = Collections.newSetFromMap(new IdentityHashMap<>());
        COMMITTING.set(committing);
      }
      committing.add(transaction);
    }
  }

  @Override
  public void afterCommit(TransactionExecution transaction, Throwable commitFailure) {
    if (committed(transaction)) {
      if (commitFailure == null) {
        CommitOutcome.reportCommitted();
      } else {
        CommitOutcome.reportUnknown();
      }
    }
  }

  @Override
  public void afterRollback(TransactionExecution transaction, Throwable rollbackFailure) {
    if (committed(transaction)) { // a rollback after the commit began: the commit failed
      CommitOutcome.reportUnknown();
    }
  }

  /** spring-jdbc is optional: without it no transaction holds a JDBC connection to mark. */
  private static final boolean JDBC = org.springframework.util.ClassUtils.isPresent(
      "org.springframework.jdbc.datasource.JdbcTransactionObjectSupport", CommitOutcomeListener.class.getClassLoader());

  /**
   * Writes {@code marker} (nullable) on {@code transaction}'s own connection when that transaction holds a connection
   * of the marker's data source (a JDBC or JPA transaction manager's); throwing rolls the transaction back.
   */
  private static void mark(TransactionExecution transaction, CommitOutcome.Marker marker) {
    if (marker != null && JDBC) {
      Jdbc.mark(transaction, marker);
    }
  }

  /** The spring-jdbc part, loaded only when spring-jdbc is present. */
  private static final class Jdbc {

    static void mark(TransactionExecution transaction, CommitOutcome.Marker marker) {
      if (!(transaction instanceof DefaultTransactionStatus status)
          || !(status.getTransaction() instanceof JdbcTransactionObjectSupport jdbc) || !jdbc.hasConnectionHolder()
          || TransactionSynchronizationManager.getResource(marker.dataSource()) != jdbc.getConnectionHolder()) {
        return;
      }
      try {
        marker.mark(jdbc.getConnectionHolder().getConnection());
      } catch (SQLException e) {
        // without its marker the work must not commit: a retry that takes the claim over would do it again
        throw new DataAccessResourceFailureException("Could not mark the Idempotency-Key claim in the transaction "
            + "before its commit; the transaction is rolled back: " + e.getMessage(), e);
      }
    }
  }

  private static boolean committed(TransactionExecution transaction) {
    Set<TransactionExecution> committing = COMMITTING.get();
    if (committing == null || !committing.remove(transaction)) {
      return false;
    }
    if (committing.isEmpty()) {
      COMMITTING.remove();
    }
    return true;
  }

  /** Adds the listener to every {@link ConfigurableTransactionManager} bean (Spring's transaction managers). */
  static final class Registrar implements BeanPostProcessor {

    private final CommitOutcomeListener listener = new CommitOutcomeListener();

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
      if (bean instanceof ConfigurableTransactionManager manager
          && manager.getTransactionExecutionListeners().stream().noneMatch(CommitOutcomeListener.class::isInstance)) {
        manager.addListener(listener);
      }
      return bean;
    }
  }
}
