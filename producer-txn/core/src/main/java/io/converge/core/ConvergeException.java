package io.converge.core;

/**
 * The root of every exception Converge throws. Unchecked; subtypes carry the object involved (message
 * id, key, state) so that callers can act on it without parsing the text.
 */
public class ConvergeException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String messageId;

  /** An exception about the message {@code messageId} (may be null when no message is involved). */
  public ConvergeException(String message, String messageId, Throwable cause) {
    super(message, cause);
    this.messageId = messageId;
  }

  /** An exception not tied to one message. */
  public ConvergeException(String message, Throwable cause) {
    this(message, null, cause);
  }

  /** An exception not tied to one message, without a cause. */
  public ConvergeException(String message) {
    this(message, null, null);
  }

  /** The id of the message involved, or null when none is. */
  public String messageId() {
    return messageId;
  }
}
