package io.converge.core;

/**
 * The unit of work ran longer than the local-transaction timeout; it was rolled back.
 *
 * <p>{@link #messageId()} names the message involved, when there is one.
 */
public class TransactionTimedOutException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** An error about message {@code messageId} (may be null). */
  public TransactionTimedOutException(String message, String messageId, Throwable cause) {
    super(message, messageId, cause);
  }
}
