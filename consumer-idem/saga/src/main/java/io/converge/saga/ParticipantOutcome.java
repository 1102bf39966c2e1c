package io.converge.saga;

/** What {@link SagaParticipant#handle} did with one command. */
public enum ParticipantOutcome {
  /** The forward work ran and succeeded; the reply is stored and sent. */
  DONE,
  /** The forward work refused (business); nothing changed; the refusal is stored and sent. */
  REFUSED,
  /** The work failed technically; nothing is stored; a technical-failure reply is sent. */
  FAILED,
  /** The command was seen before (a re-send after a timeout): its stored reply is sent again, no work ran. */
  REPLAYED,
  /** The compensation ran and undid the forward work. */
  COMPENSATED,
  /** A compensation with nothing to undo: the forward work never ran here (or was refused); recorded as empty. */
  COMPENSATED_EMPTY,
  /**
   * A compensation whose forward work ran here, of a step with no compensation registered: nothing was undone, so
   * a money anomaly is replied ({@link ReplyClass#ANOMALY}, reason {@code NO_UNDO}, an error log) and the
   * coordinator stops the saga with a ticket. Nothing is stored, so this participant would run a compensation
   * registered later if the same command reached it again; the coordinator does not send it again to a stopped
   * saga: the person on the ticket undoes the step.
   */
  NO_UNDO,
  /**
   * A forward command that came after its compensation (a hanging branch): refused, visibly (a warning, the
   * {@link SagaMetrics#hangingRefused} count, a {@link ReplyClass#BUSINESS_FAILURE} reply with reason
   * {@code HANGING_REFUSED}); its work never runs.
   */
  HANGING_REFUSED
}
