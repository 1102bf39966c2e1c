package io.converge.producer.spi;

import java.sql.Connection;

/**
 * A {@link io.converge.producer.TxnProducer} that can join a database transaction which someone else
 * opened and will end, such as Spring's {@code @Transactional}: the glue that owns the transaction (e.g.
 * {@code TransactionalPublisher}) calls {@link #join(Connection)} at the first publish and reports the
 * transaction's end to the returned {@link JoinedTransaction}. Every producer made by
 * {@code TxnProducer.builder()} implements it; a producer of one's own (a decorator) implements it to work
 * under {@code TransactionalPublisher}. Implementations are thread-safe.
 */
public interface JoinableProducer {

  /**
   * Joins the transaction open on {@code connection} (auto-commit off, owned by the caller, who commits
   * or rolls it back and closes it).
   *
   * @param connection the transaction's connection; not null
   * @return the joined transaction, to publish through and to tell of the transaction's end
   * @throws io.converge.core.ConvergeException when the producer is closed
   */
  JoinedTransaction join(Connection connection);
}
