package io.converge.producer;

/**
 * The caller's part of a transaction: business writes on {@link TxnContext#connection()} and any
 * number of {@link TxnContext#publish(OutgoingMessage) publishes}. Throwing rolls everything back.
 *
 * @param <T> what the unit returns to the caller
 */
@FunctionalInterface
public interface UnitOfWork<T> {

  /** Runs the unit inside the transaction opened by {@link TxnProducer#inTransaction(UnitOfWork)}. */
  T run(TxnContext tx) throws Exception;
}
