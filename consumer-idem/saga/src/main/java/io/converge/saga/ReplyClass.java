package io.converge.saga;

/**
 * What a reply means for the saga (the source article's section 7.1): the classes a {@link ReplyClassifier}
 * sorts replies into.
 */
public enum ReplyClass {
  /** The step is done: the saga goes on with the next step (or, for a compensation, the previous one). */
  SUCCESS,
  /** The participant refused for a business reason and did nothing: compensate the steps before at once. */
  BUSINESS_FAILURE,
  /** The participant failed for a technical reason and did nothing: ask again (a new attempt) after a backoff. */
  TECHNICAL_FAILURE,
  /** A money anomaly (amount or currency mismatch, ...): the saga stops where it is and a ticket is raised. */
  ANOMALY
}
