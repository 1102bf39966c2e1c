package io.converge.consumer.internal;

import io.converge.core.ConvergeException;

/**
 * A message the handler's {@link EnvelopeRules} refuse: parked in {@code converge_dlq} with {@link #code()} and
 * {@link #reason()}, never run, no attempt counted. Thrown by {@link GroupSetup#handle} (an unsupported schema, met
 * on the handler's transaction), returned by the arrival checks (a bad signature, a replay).
 */
final class RejectedMessage extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final String code;
  private final boolean claims;

  /**
   * @param code the reason code of the parked row
   * @param reason the reason, the bad value quoted
   * @param claims whether parking claims the message id (false when the id cannot be trusted: a bad signature)
   */
  RejectedMessage(String code, String reason, String messageId, boolean claims) {
    super(reason, messageId, null);
    this.code = code;
    this.claims = claims;
  }

  String code() {
    return code;
  }

  String reason() {
    return getMessage();
  }

  boolean claims() {
    return claims;
  }

  @Override
  public String toString() {
    return code + ": " + getMessage();
  }
}
