package io.converge.producer;

import java.sql.Connection;

/**
 * The transaction a {@link UnitOfWork} runs in. Valid only during {@link UnitOfWork#run}; not
 * thread-safe (one unit of work runs on one thread).
 */
public interface TxnContext {

  /** The JDBC connection of the transaction: do the business writes here. Do not commit it. */
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
