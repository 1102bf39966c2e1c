package io.converge.producer.spring;

import io.converge.core.ConvergeException;

/**
 * {@link TransactionalPublisher} was called in a Spring transaction that does not own the publisher's
 * database connection (typically its transaction manager runs on another {@code DataSource}): the
 * transaction-log row would commit on its own, whatever the transaction does. Carries the id of the
 * message that was not published.
 */
public final class TransactionNotBoundException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  TransactionNotBoundException(String message, String messageId) {
    super(message, messageId, null);
  }
}
