package io.converge.producer;

import io.converge.core.ConvergeException;

/**
 * A call on {@link TxnContext#connection()} that would end the unit's transaction behind its back
 * ({@code commit()}, {@code rollback()}, {@code setAutoCommit(true)}): the unit ends the transaction
 * itself, so that its messages end with it. Throw from the unit of work to roll back; return to commit.
 * The unit's transaction is left as it was and can still roll back as a whole.
 */
public class ConnectionCallRefusedException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** The refused call {@code call}, e.g. {@code commit()}. */
  public ConnectionCallRefusedException(String call) {
    super("Connection." + call + " refused on TxnContext.connection(): the unit of work ends its own transaction"
        + " (and its messages with it); throw from the unit of work to roll back, return from it to commit,"
        + " or use connection().rollback(savepoint) to undo part of it");
  }
}
