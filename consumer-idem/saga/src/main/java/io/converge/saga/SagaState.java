package io.converge.saga;

/** The states of a saga ({@code converge_saga.state}). */
public enum SagaState {

  /** Going forward: a step's command is out, or its next send is due. */
  RUNNING,
  /** Undoing the steps that were sent, last first. */
  COMPENSATING,
  /** Every step succeeded. Final. */
  COMPLETED,
  /** Every step that was sent is compensated. Final. */
  COMPENSATED,
  /** A compensation failed its attempts: automation stopped, a ticket is open for a person. */
  COMPENSATION_FAILED,
  /** A money anomaly was replied: the saga stopped where it was, a ticket is open for a person. */
  STOPPED;

  /** Whether the coordinator still drives a saga in this state. */
  public boolean active() {
    return this == RUNNING || this == COMPENSATING;
  }
}
