package io.converge.consumer;

import io.converge.producer.ConvergeException;

/** A transition that the {@link StateMachine}'s whitelist does not allow. Never retried. */
public class IllegalTransitionException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final String entityType;
  private final Object entityId;
  private final String from;
  private final String to;

  /** Entity {@code entityType}/{@code entityId} cannot go from {@code from} to {@code to}. */
  public IllegalTransitionException(String entityType, Object entityId, String from, String to) {
    super("Illegal transition of " + entityType + " " + entityId + ": " + from + " -> " + to + " is not allowed");
    this.entityType = entityType;
    this.entityId = entityId;
    this.from = from;
    this.to = to;
  }

  /** The entity type (the state machine's name). */
  public String entityType() {
    return entityType;
  }

  /** The entity id, or null when the check was made without one. */
  public Object entityId() {
    return entityId;
  }

  /** The current state. */
  public String from() {
    return from;
  }

  /** The refused target state. */
  public String to() {
    return to;
  }
}
