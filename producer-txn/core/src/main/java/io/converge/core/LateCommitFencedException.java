package io.converge.core;

/**
 * The unit of work reached its commit after a check-back had already answered ROLLBACK for one of its messages (the message was discarded); the unit of work was rolled back so that no business write is left without its message.
 *
 * <p>{@link #messageId()} names the message involved, when there is one.
 */
public class LateCommitFencedException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** An error about message {@code messageId} (may be null). */
  public LateCommitFencedException(String message, String messageId, Throwable cause) {
    super(message, messageId, cause);
  }
}
