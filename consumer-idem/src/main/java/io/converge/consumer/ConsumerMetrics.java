package io.converge.consumer;

/**
 * Receives the events a consumer counts. The Micrometer implementation is
 * {@code io.converge.consumer.micrometer.MicrometerConsumerMetrics} (meters {@code consumer.duplicates},
 * {@code consumer.processed}, {@code consumer.failures}, {@code consumer.dead.lettered},
 * {@code consumer.tickets}, gauge {@code dlq.size}). Implementations are thread-safe and must not throw.
 */
public interface ConsumerMetrics {

  /** A delivery reached {@code outcome} for {@code group} on {@code topic}. */
  void outcome(String group, String topic, Outcome outcome);

  /** An attempt failed with {@code kind}. */
  default void failure(String group, String topic, FailureKind kind) {
  }

  /**
   * A message was parked in {@code converge_dlq} without running because its envelope was refused, with
   * {@code reasonCode} ({@code SIGNATURE_INVALID}, {@code REPLAYED}, {@code SCHEMA_UNSUPPORTED}); its
   * {@link #outcome} is counted too.
   */
  default void parked(String group, String topic, String reasonCode) {
  }

  /** Counts nothing. */
  ConsumerMetrics NONE = (group, topic, outcome) -> {
  };

  /**
   * Counts nothing.
   *
   * @deprecated use {@link #NONE}, the one name of the no-op in every metrics SPI of Converge
   */
  @Deprecated(since = "0.2", forRemoval = true)
  static ConsumerMetrics noop() {
    return NONE;
  }
}
