package io.converge.producer.spring;

import io.converge.core.internal.DatabaseErrors;
import io.converge.core.ConvergeException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.spi.JoinableProducer;
import io.converge.producer.spi.JoinedTransaction;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.IdentityHashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Publishes inside the current Spring transaction ({@code @Transactional}, with a
 * {@code DataSourceTransactionManager} or JPA's on the same {@link DataSource}): the message is
 * recorded on the transaction's own connection and completed when Spring commits or rolls back, with
 * the same guarantee as {@link TxnProducer#inTransaction}.
 *
 * <pre>{@code
 * @Transactional
 * public void placeOrder(Order order) {
 *   orders.save(order);
 *   publisher.publish(OutgoingMessage.builder("order-created").key(order.id()).payload(json).build());
 * }
 * }</pre>
 *
 * <p>A {@code PROPAGATION_NESTED} transaction that rolls back (its savepoint) discards the messages
 * published inside it: they are never delivered, while the outer transaction's stay (Spring's
 * {@code TransactionSynchronization#savepointRollback} callback). A {@code PROPAGATION_REQUIRES_NEW}
 * transaction is a unit of its own: its messages go with its commit, not with the suspended one's.
 *
 * <p>Thread-safe; one instance per producer.
 */
public final class TransactionalPublisher {

  private final JoinableProducer producer;
  private final DataSource dataSource;

  /**
   * A publisher through {@code producer} on {@code dataSource}.
   *
   * @param producer a producer that can join a transaction ({@link JoinableProducer}): every one built by
   *     {@link TxnProducer#builder()} can
   * @throws IllegalArgumentException when {@code producer} cannot join a transaction
   */
  public TransactionalPublisher(TxnProducer producer, DataSource dataSource) {
    if (!(producer instanceof JoinableProducer p)) {
      throw new IllegalArgumentException("producer must implement " + JoinableProducer.class.getName()
          + " (every TxnProducer.builder() producer does), but was " + producer.getClass());
    }
    this.producer = p;
    this.dataSource = dataSource;
  }

  /**
   * Publishes {@code message} in the current transaction.
   *
   * @return the message id
   * @throws ConvergeException when no Spring transaction is active (a message must belong to one)
   * @throws TransactionNotBoundException when the transaction does not own this publisher's
   *     connection (a transaction manager on another {@code DataSource})
   */
  public String publish(OutgoingMessage message) {
    if (!TransactionSynchronizationManager.isActualTransactionActive()
        || !TransactionSynchronizationManager.isSynchronizationActive()) {
      throw new ConvergeException("publish of message " + message.id() + " needs an active Spring transaction"
          + " (annotate the caller @Transactional, or use TxnProducer.inTransaction)", message.id(), null);
    }
    JoinedTransaction joined = (JoinedTransaction) TransactionSynchronizationManager.getResource(this);
    if (joined == null) {
      Connection connection = DataSourceUtils.getConnection(dataSource);
      requireTransactional(connection, message);
      JoinedTransaction fresh = producer.join(connection);
      TransactionSynchronizationManager.bindResource(this, fresh);
      TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

        // published count when each savepoint (a NESTED transaction) was set; identity: Spring's objects
        private final Map<Object, Integer> marks = new IdentityHashMap<>();

        @Override
        public void savepoint(Object savepoint) {
          marks.put(savepoint, fresh.published());
        }

        @Override
        public void savepointRollback(Object savepoint) {
          // a savepoint set before this synchronization existed precedes the first publish: keep none
          Integer kept = marks.remove(savepoint);
          fresh.rollbackToSavepoint(kept == null ? 0 : kept);
          marks.values().removeIf(count -> count > (kept == null ? 0 : kept));
        }

        // REQUIRES_NEW / NOT_SUPPORTED suspend this transaction: its unit must not receive their publishes
        @Override
        public void suspend() {
          TransactionSynchronizationManager.unbindResource(TransactionalPublisher.this);
        }

        @Override
        public void resume() {
          TransactionSynchronizationManager.bindResource(TransactionalPublisher.this, fresh);
        }

        // set once this unit's log rows are written and the owner goes on to COMMIT
        private boolean commitAttempted;

        @Override
        public void beforeCommit(boolean readOnly) {
          fresh.beforeCommit();
          commitAttempted = true;
        }

        @Override
        public void afterCompletion(int status) {
          TransactionSynchronizationManager.unbindResourceIfPossible(TransactionalPublisher.this);
          DataSourceUtils.releaseConnection(connection, dataSource);
          if (status == STATUS_COMMITTED || (status == STATUS_ROLLED_BACK && !commitAttempted)) {
            fresh.completed(status == STATUS_COMMITTED);
          }
          // STATUS_UNKNOWN, or ROLLED_BACK after the log rows were written: the commit's outcome is unknown.
          // Spring reports a COMMIT whose answer was lost as ROLLED_BACK when the transaction manager translates
          // the failure into a DataAccessException (JdbcTransactionManager, JPA) and rolls back on the dead
          // connection, although the work and its log rows may have committed. Ending the messages with a
          // rollback would lose them; left open, the check-back (RocketMQ) or recovery (Pulsar) resolves each
          // from the log: delivered iff its log row committed.
        }
      });
      joined = fresh;
    }
    return joined.publish(message);
  }

  /** An auto-commit connection is not the transaction's: its log rows would commit on their own. */
  private void requireTransactional(Connection connection, OutgoingMessage message) {
    boolean autoCommit;
    try {
      autoCommit = connection.getAutoCommit();
    } catch (SQLException e) {
      DataSourceUtils.releaseConnection(connection, dataSource);
      throw DatabaseErrors.translate("Cannot inspect the connection to publish message " + message.id(),
          message.id(), e);
    }
    if (autoCommit) {
      DataSourceUtils.releaseConnection(connection, dataSource);
      throw new TransactionNotBoundException("publish of message " + message.id()
          + " is in a Spring transaction that does"
          + " not own the publisher's DataSource (its connection is in auto-commit mode): use a transaction manager on"
          + " the same DataSource as the TransactionalPublisher (DataSourceTransactionManager or JpaTransactionManager),"
          + " or @Transactional(transactionManager = ...) naming it", message.id());
    }
  }
}
