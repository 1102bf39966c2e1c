package io.converge.consumer;

import java.sql.SQLException;

/**
 * With {@code claimWithFirstStatement}: the claim that travelled with the handler's first statement was
 * refused (the message is a duplicate, or its key is held behind a parked message). The handler's
 * transaction is aborted and rolls back, and its connection refuses every further call with this
 * exception (a rollback, a retry or a commit of its own included), so that nothing the handler does
 * afterwards can take effect. Let it propagate: the delivery's outcome is {@link #outcome()} whatever
 * the handler makes of it. SQLState {@code 25P02} (in failed SQL transaction).
 */
public class ClaimRefusedException extends SQLException {

  private static final long serialVersionUID = 1L;

  private final String messageId;
  private final String group;
  private final transient Outcome outcome;

  /** The claim of {@code messageId} in {@code group} was refused: {@code outcome} is DUPLICATE or HELD. */
  public ClaimRefusedException(String message, String messageId, String group, Outcome outcome, Throwable cause) {
    super(message, "25P02", cause);
    this.messageId = messageId;
    this.group = group;
    this.outcome = outcome;
  }

  /** The id of the refused message. */
  public String messageId() {
    return messageId;
  }

  /** The consumer group. */
  public String group() {
    return group;
  }

  /** {@link Outcome#DUPLICATE} or {@link Outcome#HELD}. */
  public Outcome outcome() {
    return outcome;
  }
}
