package io.converge.consumer;

import io.converge.core.ConvergeException;

/**
 * Thrown by a handler to refuse a message for a business reason (risk rejected, account unknown).
 * The handler's writes are rolled back, the outcome is recorded under the message id so that a
 * redelivery does not run the handler again, and the message is not retried.
 */
public class BusinessException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final String reasonCode;

  /** A refusal with a short machine-readable {@code reasonCode} (e.g. {@code ACCOUNT_NOT_FOUND}). */
  public BusinessException(String reasonCode, String message) {
    super(reasonCode + ": " + message);
    this.reasonCode = reasonCode;
  }

  /** A refusal caused by {@code cause}. */
  public BusinessException(String reasonCode, String message, Throwable cause) {
    super(reasonCode + ": " + message, cause);
    this.reasonCode = reasonCode;
  }

  /** The machine-readable reason. */
  public String reasonCode() {
    return reasonCode;
  }
}
