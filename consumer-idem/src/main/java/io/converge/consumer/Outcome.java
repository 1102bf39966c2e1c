package io.converge.consumer;

/** What {@link IdempotentHandler#handle} did with one delivery. Every outcome means: ack the broker. */
public enum Outcome {
  /** The handler ran and its writes committed together with the dedup claim. */
  PROCESSED,
  /** The message id was already claimed (earlier or concurrently): the handler did not run. */
  DUPLICATE,
  /** The handler refused the message for a business reason; its writes were rolled back and the outcome recorded. */
  BUSINESS_FAILURE,
  /** Parked in {@code converge_dlq}: technical failures exhausted the attempts, or the message had no usable id. */
  DEAD_LETTERED,
  /** A money anomaly: processing stopped, the message parked and a manual ticket opened. */
  TICKETED,
  /**
   * Not run: an earlier message of its key is parked, so this one is parked behind it ({@code converge_dlq},
   * reason code {@code HELD}) and runs, in order, once that one is resumed or discarded
   * ({@link IdempotentHandler#releaseHeld}).
   */
  HELD
}
