package io.converge.saga.internal;

import io.converge.consumer.TransactionRunner;
import io.converge.producer.TxnContext;
import io.converge.producer.TxnProducer;
import io.converge.producer.UnitOfWorkException;
import io.converge.saga.SagaException;

/**
 * Runs an {@link io.converge.consumer.IdempotentHandler}'s transactions as {@link TxnProducer} units of work, so a
 * handler's writes, its dedup claim and the messages it publishes commit together on any backend. The handler
 * reaches the unit's {@link TxnContext} through {@link #current()}. Thread-safe.
 */
public final class ProducerTransactions implements TransactionRunner {

  private static final ThreadLocal<TxnContext> CURRENT = new ThreadLocal<>();

  private final TxnProducer producer;

  /** Units of work on {@code producer}. */
  public ProducerTransactions(TxnProducer producer) {
    this.producer = producer;
  }

  /** The unit of work running on this thread. @throws SagaException when none is */
  public static TxnContext current() {
    TxnContext tx = CURRENT.get();
    if (tx == null) {
      throw new SagaException("No TxnProducer unit of work runs on this thread: build the IdempotentHandler "
          + "with transactions(new ProducerTransactions(producer))", null);
    }
    return tx;
  }

  @Override
  public <T> T inTransaction(Work<T> work) throws Exception {
    try {
      return producer.inTransaction(tx -> {
        TxnContext outer = CURRENT.get();
        CURRENT.set(tx);
        try {
          return work.run(tx.connection());
        } finally {
          CURRENT.set(outer);
        }
      });
    } catch (UnitOfWorkException e) {
      // the consumer classifies the handler's own exception (a BusinessException, an SQLException), not the wrapper
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw e;
    }
  }
}
