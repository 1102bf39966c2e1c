package io.converge.core;

/**
 * The database refused a connection or a statement; for a failed commit the outcome is unknown and is resolved by the backend's recovery (check-back).
 *
 * <p>{@link #messageId()} names the message involved, when there is one.
 */
public class DatabaseUnavailableException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** An error about message {@code messageId} (may be null). */
  public DatabaseUnavailableException(String message, String messageId, Throwable cause) {
    super(message, messageId, cause);
  }
}
