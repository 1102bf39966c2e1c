package io.converge.saga.tcc;

import io.converge.core.ConvergeException;

/** A branch call the barrier cannot take as asked; carries the call. */
public class TccBarrierException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final transient TccCall call;

  /** A failure about {@code call}. */
  public TccBarrierException(String message, TccCall call) {
    super(message);
    this.call = call;
  }

  /** The call involved. */
  public TccCall call() {
    return call;
  }
}
