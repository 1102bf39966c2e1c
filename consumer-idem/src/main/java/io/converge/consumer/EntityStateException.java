package io.converge.consumer;

import io.converge.core.ConvergeException;

/**
 * A state change of an entity of a {@link StateMachine} that did not happen; carries the entity
 * involved. Subtypes say why: {@link IllegalTransitionException}, {@link StaleStateException}.
 */
public abstract class EntityStateException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final String entityType;
  private final Object entityId;

  /** An exception about entity {@code entityType}/{@code entityId}. */
  protected EntityStateException(String message, String entityType, Object entityId) {
    super(message);
    this.entityType = entityType;
    this.entityId = entityId;
  }

  /** The entity type (the state machine's name). */
  public String entityType() {
    return entityType;
  }

  /** The entity id, or null when the check was made without one. */
  public Object entityId() {
    return entityId;
  }
}
