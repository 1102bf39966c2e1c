package io.converge.consumer.spring;

import io.converge.core.internal.DatabaseErrors;
import io.converge.consumer.StateMachine;
import io.converge.consumer.StateMachine.Cause;
import io.converge.core.ConvergeException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The transition history of {@link StateMachine} for entities that move through JPA (or any Spring-managed
 * access) in a Spring transaction: the entity's setter calls {@link StateMachine#check}, {@code @Version} does
 * the compare-and-swap at the flush, and this appends the history row on the connection of the same transaction
 * ({@code converge_state_transition}), so the row commits iff the transition does. Inside an
 * {@code @IdempotentConsumer} method the row names the consumer group and the message id. Needs a transaction
 * manager that exposes its connection to the data source ({@code DataSourceTransactionManager},
 * {@code JpaTransactionManager} with the data source set, as Spring Boot configures it); under any other (a
 * transaction manager of another data source) the row would commit on its own, so it is refused with
 * {@link TransitionHistoryNotBoundException}. Stateless apart from its data source; thread-safe.
 */
public final class TransitionHistory {

  private final DataSource dataSource;

  private TransitionHistory(DataSource dataSource) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  /** The history on {@code dataSource} (which has the {@code consumer} migrations). */
  public static TransitionHistory of(DataSource dataSource) {
    return new TransitionHistory(dataSource);
  }

  /**
   * Records {@code from -> to} of entity {@code id} in the running transaction.
   *
   * @param newVersion the entity's version after the transition (its {@code @Version} before the flush, plus 1)
   * @param cause what caused it; its null fields are taken from the running idempotent handler, if any
   * @throws IllegalStateException when no Spring transaction is active (the row would not commit with the entity)
   * @throws TransitionHistoryNotBoundException when the transaction holds no connection of this data source
   * @throws io.converge.consumer.IllegalTransitionException when the whitelist refuses {@code from -> to}
   * @throws ConvergeException when the database refuses the row
   */
  public <S extends Enum<S>> void transition(StateMachine<S> machine, Object id, S from, S to, long newVersion,
      Cause cause) {
    run(machine, id, c -> machine.record(c, id, from, to, newVersion, cause));
  }

  /**
   * Records the creation of entity {@code id} in state {@code initial} in the running transaction.
   *
   * @param version the entity's version as inserted (JPA's {@code @Version} starts at 0)
   * @throws IllegalStateException when no Spring transaction is active
   * @throws TransitionHistoryNotBoundException when the transaction holds no connection of this data source
   * @throws ConvergeException when the database refuses the row
   */
  public <S extends Enum<S>> void created(StateMachine<S> machine, Object id, S initial, long version, Cause cause) {
    run(machine, id, c -> machine.recordCreated(c, id, initial, version, cause));
  }

  private interface Write {

    void run(Connection c) throws SQLException;
  }

  private void run(StateMachine<?> machine, Object id, Write write) {
    if (!TransactionSynchronizationManager.isActualTransactionActive()) {
      throw new IllegalStateException("The history of " + machine.entityType() + " " + id
          + " must be recorded in the transaction that moves it (no Spring transaction is active)");
    }
    // before getConnection: under synchronization it binds a fresh connection of its own, which would pass
    boolean bound = TransactionSynchronizationManager.hasResource(dataSource);
    if (!bound) {
      throw new TransitionHistoryNotBoundException(machine.entityType(), id);
    }
    Connection c = DataSourceUtils.getConnection(dataSource);
    try {
      if (c.getAutoCommit()) { // bound, but by plain JDBC use under another data source's manager
        throw new TransitionHistoryNotBoundException(machine.entityType(), id);
      }
      write.run(c);
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not record the history of " + machine.entityType() + " " + id, null, e);
    } finally {
      DataSourceUtils.releaseConnection(c, dataSource);
    }
  }
}
