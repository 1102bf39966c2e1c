package io.converge.consumer.spring;

import io.converge.core.ConvergeException;

/**
 * {@link TransitionHistory} was called in a Spring transaction that does not hold a connection of its data source
 * (a transaction manager of another data source, or {@code JpaTransactionManager} without the data source set):
 * the history row would commit on its own, apart from the transition, so nothing was written. A JTA transaction
 * ({@code JtaTransactionManager}) holds no such connection either and is refused: the history supports the local
 * transaction managers of one data source only.
 */
public class TransitionHistoryNotBoundException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** The history of {@code entityType} {@code id} was refused. */
  public TransitionHistoryNotBoundException(String entityType, Object id) {
    super("The history of " + entityType + " " + id + " must be recorded on the connection of the transaction that"
        + " moves it, but the running Spring transaction holds no connection of the data source given to"
        + " TransitionHistory.of: run it under a DataSourceTransactionManager or JpaTransactionManager of that data"
        + " source (JpaTransactionManager.setDataSource; Spring Boot's default does it), or give TransitionHistory.of"
        + " the data source the transaction manager uses (JTA transactions are not supported)");
  }
}
