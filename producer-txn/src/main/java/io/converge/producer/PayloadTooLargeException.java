package io.converge.producer;

import io.converge.core.ConvergeException;

/**
 * The payload is larger than the producer's configured limit; nothing was sent.
 *
 * <p>{@link #messageId()} names the message involved, when there is one.
 */
public class PayloadTooLargeException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** An error about message {@code messageId} (may be null). */
  public PayloadTooLargeException(String message, String messageId, Throwable cause) {
    super(message, messageId, cause);
  }
}
