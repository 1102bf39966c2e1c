package io.converge.saga;

import java.time.Duration;

/**
 * An operator's action ({@link SagaOps#retry}, {@link SagaOps#compensate}) was refused because the saga is older than
 * the participants keep its steps' rows ({@link SagaBranchRetention#sendHorizon()}): a compensation sent now could find
 * its forward row purged and undo nothing, a re-sent forward command could run twice. Nothing was changed; the
 * saga's steps must be checked and undone by hand (then {@link SagaOps#resolve}). Carries the saga's age and the
 * horizon.
 */
public final class SagaTooOldException extends SagaOperationRefusedException {

  private static final long serialVersionUID = 1L;

  private final Duration age;
  private final Duration horizon;

  /** Refused on saga {@code sagaId} in {@code state}, {@code age} old, past {@code horizon}. */
  public SagaTooOldException(String sagaId, SagaState state, Duration age, Duration horizon) {
    super("saga " + sagaId + " is " + age + " old, past the " + horizon + " in which its participants still keep its"
        + " steps' rows (converge.saga.participant-retention less the send margin): no command of it is sent any more;"
        + " check its steps and undo them by hand, then resolve it", sagaId, state);
    this.age = age;
    this.horizon = horizon;
  }

  /** The saga's age when the action was refused. */
  public Duration age() {
    return age;
  }

  /** The age past which no command is sent. */
  public Duration horizon() {
    return horizon;
  }
}
