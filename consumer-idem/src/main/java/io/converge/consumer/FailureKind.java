package io.converge.consumer;

/**
 * The kinds of failure of the article's chapter 7.1, each with its own policy, plus the outage of a
 * resource the handler needs, which is no failure of the message at all.
 */
public enum FailureKind {
  /** Failures of the handler's own logic or data: roll back, retry with backoff, dead-letter after N attempts. */
  TECHNICAL,
  /** A refusal by the business (risk rejected, account unknown): roll back, no retry, outcome recorded. */
  BUSINESS,
  /** Amount or currency mismatch: roll back, stop, park the message and open a manual ticket. */
  MONEY_ANOMALY,
  /**
   * The database or a broker the handler publishes to is unreachable (connection refused or timed out,
   * pool exhausted, server shutting down or out of resources, a serialization failure or deadlock that
   * the server rolled back): roll back, record nothing, wait with capped backoff and run the same
   * message again, for as long as the outage lasts. Never counts as an attempt, never parks.
   */
  UNAVAILABLE
}
