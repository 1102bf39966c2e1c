package io.converge.saga;

/**
 * Where the coordinator and the participants count what they do. Implementations must be thread-safe and must
 * not throw. {@link #NONE} counts nothing; {@code io.converge.saga.micrometer.MicrometerSagaMetrics} counts on
 * Micrometer.
 */
public interface SagaMetrics {

  /** Counts nothing. */
  SagaMetrics NONE = new SagaMetrics() {
  };

  /** A saga of {@code definition} could not be driven (see its {@code SET_ASIDE} event) and waits to be tried again. */
  default void setAside(String definition) {
  }

  /**
   * The reply of a step's command was applied, {@code latency} after the command of that attempt was first sent
   * (re-asks after a timeout included); {@code direction} is {@code forward} or {@code compensate}. Reading the send
   * time costs one indexed query per reply, made only when the metrics are not {@link #NONE}.
   */
  default void stepReplied(String definition, String step, String direction, java.time.Duration latency) {
  }

  /** A saga of {@code definition} started. */
  default void started(String definition) {
  }

  /** A saga of {@code definition} ended in {@code state} (a final {@link SagaState}). */
  default void ended(String definition, SagaState state) {
  }

  /** A reply that was not applied: {@code kind} is {@code DUPLICATE_REPLY} or {@code LATE_REPLY}. */
  default void replyIgnored(String definition, String kind) {
  }

  /**
   * A compensation of {@code step} replied SUCCESS for a saga that no longer exists (purged; re-driven late): it may
   * have undone the step twice; an {@code ANOMALY} ticket is open.
   */
  default void compensationAfterPurge(String step) {
  }

  /** A compensation command of {@code participant} was sent. */
  default void compensationSent(String participant) {
  }

  /** A compensation of {@code participant} was delayed by its rate limit. */
  default void compensationDelayed(String participant) {
  }

  /** A participant refused a forward command that came after its compensation (a hanging branch). */
  default void hangingRefused(String participant, String step) {
  }
}
