package io.converge.saga.tcc;

/**
 * Where a {@link TccBarrier} counts what it does. Implementations must be thread-safe and must not throw.
 * {@link #NONE} counts nothing; {@code io.converge.saga.tcc.micrometer.MicrometerTccMetrics} counts on Micrometer.
 */
public interface TccMetrics {

  /** Counts nothing. */
  TccMetrics NONE = new TccMetrics() {
  };

  /** A call of {@code operation} ended in {@code outcome} (counted once the barrier decided, before the commit). */
  default void called(TccOperation operation, TccOutcome outcome) {
  }

  /** A Try was refused because its Cancel came first (a hanging branch); also counted by {@link #called}. */
  default void hanging(String tenant) {
  }
}
