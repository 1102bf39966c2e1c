package io.converge.core;

/**
 * The database answered a statement or a {@code COMMIT} of a unit of work with an error (a constraint violated, a
 * transaction already aborted by an earlier failed statement, a lock or statement timeout, a serialization failure):
 * the connection is fine and nothing of the unit was committed. A failure of the unit, not an outage: a consumer
 * counts an attempt and dead-letters the message after its policy's attempts, the Idempotency-Key filter stores the
 * failure as the answer (see {@code io.converge.core.internal.DatabaseErrors}, the one classification of database
 * errors).
 *
 * <p>{@link #messageId()} names the message involved, when there is one; {@link #sqlState()} the database's
 * SQLState, when it gave one.
 */
public class DatabaseRefusedException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final String sqlState;

  /**
   * The database refused {@code what} with {@code sqlState} (may be null); {@code messageId} may be null. The
   * message is {@code what} followed by the SQLState and the cause's message.
   */
  public DatabaseRefusedException(String what, String messageId, String sqlState, Throwable cause) {
    super(what + " (SQLState " + sqlState + ")" + (cause == null ? "" : ": " + cause.getMessage()), messageId, cause);
    this.sqlState = sqlState;
  }

  /** The SQLState the database answered, e.g. {@code 25P02}; null when the driver gave none. */
  public String sqlState() {
    return sqlState;
  }
}
