package io.converge.consumer;

import io.converge.core.ConvergeException;

/**
 * Thrown by a handler when money does not add up (amount or currency mismatch). Processing of the
 * message stops: writes are rolled back, nothing is retried, the message is parked and a manual
 * ticket is opened (the article's suspense account). A person decides.
 */
public class MoneyAnomalyException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final String expected;
  private final String actual;

  /** An anomaly: what was {@code expected} (e.g. "100.00 EUR") and what was {@code actual}. */
  public MoneyAnomalyException(String message, String expected, String actual) {
    super(message + " (expected " + expected + ", actual " + actual + ")");
    this.expected = expected;
    this.actual = actual;
  }

  /** The expected amount/currency as text. */
  public String expected() {
    return expected;
  }

  /** The actual amount/currency as text. */
  public String actual() {
    return actual;
  }
}
