package io.converge.core;

/**
 * The commit of a unit of work failed and its outcome is unknown (the connection broke during {@code COMMIT}): the
 * unit may have committed. Its messages are resolved from the transaction log by the backend's recovery, so none is
 * lost or sent without its commit; but the unit's other writes may be in the database, so a caller must not blindly
 * re-run a unit that is not idempotent (the Idempotency-Key filter stores this failure as the answer instead of
 * releasing the key).
 *
 * <p>{@link #messageId()} names the last message published in the unit, when there is one.
 */
public class CommitOutcomeUnknownException extends DatabaseUnavailableException {

  private static final long serialVersionUID = 1L;

  /** A commit whose outcome is unknown, about message {@code messageId} (may be null). */
  public CommitOutcomeUnknownException(String message, String messageId, Throwable cause) {
    super(message, messageId, cause);
  }
}
