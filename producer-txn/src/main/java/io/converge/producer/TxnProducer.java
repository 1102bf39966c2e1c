package io.converge.producer;

import io.converge.core.DatabaseUnavailableException;
import io.converge.core.LateCommitFencedException;
import io.converge.core.TransactionTimedOutException;
import io.converge.producer.internal.DefaultTxnProducer;

/**
 * Publishes messages atomically with a local database transaction: a message is delivered (at least
 * once) if and only if the transaction commits, and a crash at any point neither loses a committed
 * message nor leaks an uncommitted one. The backend (RocketMQ half messages, Pulsar transactions,
 * transactional outbox) is configuration; calling code is the same for all.
 *
 * <pre>{@code
 * TxnProducer producer = TxnProducer.builder()
 *     .group("order-service")
 *     .dataSource(dataSource)
 *     .backend(RocketMQBackend.nameServer("127.0.0.1:9876"))
 *     .build();
 * String orderId = producer.inTransaction(tx -> {
 *   insertOrder(tx.connection(), order);
 *   tx.publish(OutgoingMessage.builder("order-created").key(order.id()).payload(json).build());
 *   return order.id();
 * });
 * }</pre>
 *
 * <p>Thread-safe: any number of threads may run units of work at once. Several producers (groups,
 * backends) may live in one application.
 */
public interface TxnProducer extends AutoCloseable {

  /** A builder; see {@link TxnProducerBuilder} for the settings and their defaults. */
  static TxnProducerBuilder builder() {
    return new TxnProducerBuilder(DefaultTxnProducer::new);
  }

  /**
   * Opens a transaction on the producer's data source, runs {@code work} in it, commits, and completes
   * the published messages. When {@code work} throws, the transaction rolls back and no message is
   * ever delivered; the exception is rethrown (a checked one wrapped in a {@link UnitOfWorkException},
   * or a {@link DatabaseUnavailableException} when it is a lost connection).
   *
   * @return what {@code work} returned
   * @throws DatabaseUnavailableException when no connection can be had, or the commit failed
   * @throws io.converge.core.DatabaseRefusedException when the database refuses the connection (e.g. bad credentials,
   *     SQLState class 28) or the work's statements
   * @throws TransactionTimedOutException when {@code work} ran past the local-transaction timeout
   * @throws LateCommitFencedException when a check-back already discarded one of its messages
   */
  <T> T inTransaction(UnitOfWork<T> work);

  /** The producer group (also the envelope's source). */
  String group();

  /** The name of the backend, e.g. {@code rocketmq}. */
  String backend();

  /** Stops the backend's clients and background work. Idempotent. */
  @Override
  void close();
}
