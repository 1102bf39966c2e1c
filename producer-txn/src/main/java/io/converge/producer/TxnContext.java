package io.converge.producer;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import java.sql.Connection;

/**
 * The transaction a {@link UnitOfWork} runs in. Valid only during {@link UnitOfWork#run}; not
 * thread-safe (one unit of work runs on one thread).
 */
public interface TxnContext {

  /**
   * The JDBC connection of the transaction: do the business writes here. The unit of work ends the
   * transaction: {@code commit()}, {@code rollback()} and {@code setAutoCommit(true)} on it throw
   * {@link ConnectionCallRefusedException} (throw from the unit to roll back, return to commit), and
   * {@code close()} does nothing (the connection is closed when the unit ends), so a
   * try-with-resources around it is harmless.
   *
   * <p>Savepoints work as in JDBC: after {@code rollback(savepoint)} the messages published since
   * {@code setSavepoint()} are discarded with the rows written since, and are never delivered; the
   * messages published before it stay part of the transaction. Set savepoints through this
   * connection (not through an unwrapped one or an SQL {@code SAVEPOINT} statement): a rollback to a
   * savepoint it did not see fails with a {@link ConvergeException}. When the messages after a
   * savepoint cannot be discarded (the backend fails), the rollback throws and the unit can no longer
   * commit: it rolls back as a whole, even if the exception is caught.
   */
  Connection connection();

  /**
   * Publishes {@code message} atomically with this transaction: it is delivered (at least once) if
   * and only if the transaction commits.
   *
   * @return the message id
   * @throws PayloadTooLargeException when the payload exceeds the producer's limit (nothing sent)
   * @throws BrokerUnavailableException when the backend cannot reach its broker
   */
  String publish(OutgoingMessage message);
}
