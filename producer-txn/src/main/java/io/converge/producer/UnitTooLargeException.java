package io.converge.producer;

import io.converge.core.ConvergeException;

/**
 * A publish would take its unit of work over the producer's {@code maxUnitMessages} or {@code maxUnitBytes}; this
 * message was not published (the unit's earlier messages stay, and commit or roll back with it).
 *
 * <p>{@link #messageId()} names the message refused.
 */
public class UnitTooLargeException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** An error about message {@code messageId}. */
  public UnitTooLargeException(String message, String messageId, Throwable cause) {
    super(message, messageId, cause);
  }
}
