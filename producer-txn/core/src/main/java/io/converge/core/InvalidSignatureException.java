package io.converge.core;

/**
 * A message's {@link Envelope#SIGNATURE} does not verify ({@link MessageSignature#verify}): it is missing, malformed
 * or truncated, names an unknown or retired key, signs a message without a body, or its MAC does not match. The
 * message quotes the reason; {@link #messageId()} is the message's {@link Envelope#MESSAGE_ID} as sent (untrusted).
 */
public class InvalidSignatureException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  /** A signature that does not verify, for {@code reason}; {@code messageId} may be null. */
  public InvalidSignatureException(String reason, String messageId) {
    super(reason, messageId, null);
  }
}
