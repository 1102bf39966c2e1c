package io.converge.consumer.internal;

import io.converge.core.ConvergeException;

/** Nothing was recorded for the message: the binding must not ack it (the broker redelivers it). */
final class OutcomeNotRecordedException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  OutcomeNotRecordedException(String message, String messageId, Throwable cause) {
    super(message, messageId, cause);
  }
}
