package io.converge.saga;

/**
 * The headers of saga commands and replies, next to the {@link io.converge.core.Envelope} ones. Part of the
 * public contract: a participant that is not a {@link SagaParticipant} must copy {@link #SAGA_ID}, {@link #STEP},
 * {@link #ATTEMPT} and {@link #DIRECTION} of the command into its reply, set {@link #OUTCOME}, and publish it to
 * the topic named by {@link #REPLY_TO}.
 */
public final class SagaHeaders {

  /** The saga id. */
  public static final String SAGA_ID = "converge-saga-id";
  /** The step's name. */
  public static final String STEP = "converge-saga-step";
  /** The attempt of the step (1 for the first command; a technical failure starts the next). */
  public static final String ATTEMPT = "converge-saga-attempt";
  /** {@value #FORWARD} or {@value #COMPENSATE}. */
  public static final String DIRECTION = "converge-saga-direction";
  /**
   * The command's id: the same for every re-send of one (saga, step, attempt, direction), so a participant
   * answers a repeat with its stored reply. The envelope's message id differs per send (the transaction log of
   * the RocketMQ backend keys on it), so broker redeliveries of one send are told apart from re-asks.
   */
  public static final String COMMAND_ID = "converge-saga-command-id";
  /** The topic the coordinator reads replies on. */
  public static final String REPLY_TO = "converge-saga-reply-to";
  /** In a reply: a {@link ReplyClass} name. */
  public static final String OUTCOME = "converge-saga-outcome";
  /** In a reply: a participant's reason code (e.g. {@code HANGING_REFUSED}), optional. */
  public static final String REASON = "converge-saga-reason";

  /** The direction of a forward command. */
  public static final String FORWARD = "forward";
  /** The direction of a compensation command. */
  public static final String COMPENSATE = "compensate";

  private SagaHeaders() {
  }
}
