package io.converge.saga;

import io.converge.core.ConvergeException;

/** A saga could not be driven as asked; carries the saga id. */
public class SagaException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final String sagaId;

  /** A failure about saga {@code sagaId}. */
  public SagaException(String message, String sagaId) {
    super(message);
    this.sagaId = sagaId;
  }

  /** A failure about saga {@code sagaId}, caused by {@code cause}. */
  public SagaException(String message, String sagaId, Throwable cause) {
    super(message, cause);
    this.sagaId = sagaId;
  }

  /** The saga's id. */
  public String sagaId() {
    return sagaId;
  }
}
