package io.converge.outbox.spi;

import java.time.Duration;

/**
 * What the relay counts. Implementations are thread-safe; {@link #NONE} counts nothing; see
 * {@code io.converge.outbox.micrometer.MicrometerRelayMetrics} for Micrometer.
 */
public interface RelayMetrics {

  /** Counts nothing. */
  RelayMetrics NONE = new RelayMetrics() {
  };

  /** {@code count} rows were published: {@code outbox.published}. */
  default void published(int count) {
  }

  /** A key was parked: {@code outbox.parked.total}. */
  default void parked(String key) {
  }

  /** The oldest unpublished, unparked row is {@code age} old (zero when none): {@code outbox.lag}. */
  default void lag(Duration age) {
  }

  /** {@code count} rows are parked now: {@code outbox.parked}. */
  default void parkedNow(long count) {
  }

  /** The CDC relay's engine failed and is restarted: {@code cdc.restarts}. */
  default void cdcRestarted() {
  }

  /** The CDC relay's slot is {@code bytes} of WAL behind the server (-1: no slot): {@code cdc.lag}. */
  default void cdcLag(long bytes) {
  }
}
