package io.converge.core;

/**
 * The broker could not be reached or refused the message; nothing was committed (for backends that reach the broker inside the unit of work).
 *
 * <p>{@link #messageId()} names the message involved, when there is one.
 */
public class BrokerUnavailableException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** An error about message {@code messageId} (may be null). */
  public BrokerUnavailableException(String message, String messageId, Throwable cause) {
    super(message, messageId, cause);
  }
}
