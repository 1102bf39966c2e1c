package io.converge.consumer.spring;

import io.converge.consumer.CommitOutcome;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;

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
