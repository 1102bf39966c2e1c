package io.converge.consumer;

/** The three kinds of failure of the article's chapter 7.1, each with its own policy. */
public enum FailureKind {
  /** Timeouts, connection errors, deadlocks, lost races: roll back, retry with backoff, dead-letter after N attempts. */
  TECHNICAL,
  /** A refusal by the business (risk rejected, account unknown): roll back, no retry, outcome recorded. */
  BUSINESS,
  /** Amount or currency mismatch: roll back, stop, park the message and open a manual ticket. */
  MONEY_ANOMALY
}
