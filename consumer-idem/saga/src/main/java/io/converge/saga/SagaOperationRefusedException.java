package io.converge.saga;

/**
 * An operator's action ({@link SagaOps}) was refused: the saga is unknown, or in a state the action does not apply
 * to (e.g. a retry of a {@code COMPLETED} saga), or it has no open ticket to resolve. Nothing was changed. Carries
 * the saga id (null when a ticket id named nothing) and the state it was found in (null when there is no such saga).
 */
public class SagaOperationRefusedException extends SagaException {

  private static final long serialVersionUID = 1L;

  private final SagaState state;

  /** Refused on saga {@code sagaId}, found in {@code state} (null when unknown). */
  public SagaOperationRefusedException(String message, String sagaId, SagaState state) {
    super(message, sagaId);
    this.state = state;
  }

  /** The state the saga was found in; null when there is no such saga. */
  public SagaState state() {
    return state;
  }
}
