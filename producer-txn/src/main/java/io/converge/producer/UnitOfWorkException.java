package io.converge.producer;

import io.converge.core.ConvergeException;

/**
 * The caller's unit of work threw a checked exception (e.g. an {@link java.sql.SQLException} of a
 * business write: a constraint violated); it was rolled back and no message is delivered. The cause
 * is the exception thrown.
 */
public class UnitOfWorkException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** The unit of work failed with {@code cause}; {@code messageId} is the last message it published, or null. */
  public UnitOfWorkException(String message, String messageId, Throwable cause) {
    super(message, messageId, cause);
  }
}
