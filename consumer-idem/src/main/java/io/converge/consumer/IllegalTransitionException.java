package io.converge.consumer;

/** A transition that the {@link StateMachine}'s whitelist does not allow. Never retried. */
public class IllegalTransitionException extends EntityStateException {

  private static final long serialVersionUID = 1L;

  private final String from;
  private final String to;

  /** Entity {@code entityType}/{@code entityId} cannot go from {@code from} to {@code to}. */
  public IllegalTransitionException(String entityType, Object entityId, String from, String to) {
    super("Illegal transition of " + entityType + " " + entityId + ": " + from + " -> " + to + " is not allowed",
        entityType,
        entityId);
    this.from = from;
    this.to = to;
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
