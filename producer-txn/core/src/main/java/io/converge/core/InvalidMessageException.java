package io.converge.core;

/**
 * A message is malformed: empty or illegal topic, key or header; nothing was sent.
 *
 * <p>{@link #messageId()} names the message involved, when there is one.
 */
public class InvalidMessageException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** An error about message {@code messageId} (may be null). */
  public InvalidMessageException(String message, String messageId, Throwable cause) {
    super(message, messageId, cause);
  }
}
