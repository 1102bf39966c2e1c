package io.converge.outbox;

import io.converge.core.internal.Require;
import java.time.Duration;

/**
 * How a relay delivers rows, the same for the polling relay ({@link OutboxRelayBuilder}) and the CDC relay
 * ({@code CdcRelay.Builder}): the same names, validated by the same rules, the same defaults but for the CDC relay's
 * shorter retry pace ({@code CdcRelay.DEFAULT_RETRY_BASE}: its stream retries inline). Immutable.
 *
 * @param maxAttempts refusals of one row before it (and the rest of its line) is parked; default
 *     {@value #DEFAULT_MAX_ATTEMPTS}, 1 to 1000
 * @param retryBase first delay before a refused row is retried (then doubled, with jitter); default 1 s, positive
 * @param retryMax longest delay between retries of a refused row; default 5 min, at least {@code retryBase}
 * @param brokerBackoffBase first delay after the broker or the database was unavailable (an outage never counts as
 *     an attempt and never parks); default 200 ms, positive
 * @param brokerBackoffMax longest delay while the broker or the database stays unavailable; default 30 s, at least
 *     {@code brokerBackoffBase}
 */
public record DeliverySettings(int maxAttempts, Duration retryBase, Duration retryMax, Duration brokerBackoffBase,
    Duration brokerBackoffMax) {

  /** The default {@link #maxAttempts}. */
  public static final int DEFAULT_MAX_ATTEMPTS = 5;
  /** The default {@link #retryBase}. */
  public static final Duration DEFAULT_RETRY_BASE = Duration.ofSeconds(1);
  /** The default {@link #retryMax}. */
  public static final Duration DEFAULT_RETRY_MAX = Duration.ofMinutes(5);
  /** The default {@link #brokerBackoffBase}. */
  public static final Duration DEFAULT_BROKER_BACKOFF_BASE = Duration.ofMillis(200);
  /** The default {@link #brokerBackoffMax}. */
  public static final Duration DEFAULT_BROKER_BACKOFF_MAX = Duration.ofSeconds(30);

  /** The defaults. */
  public static DeliverySettings defaults() {
    return new DeliverySettings(DEFAULT_MAX_ATTEMPTS, DEFAULT_RETRY_BASE, DEFAULT_RETRY_MAX,
        DEFAULT_BROKER_BACKOFF_BASE, DEFAULT_BROKER_BACKOFF_MAX);
  }

  /**
   * Validates the settings of the relay whose settings are named {@code prefix.*} ({@code relay}, {@code cdc}).
   *
   * @throws IllegalArgumentException naming the setting ({@code prefix.maxAttempts}, ...) and quoting its value
   */
  public static DeliverySettings validated(String prefix, int maxAttempts, Duration retryBase, Duration retryMax,
      Duration brokerBackoffBase, Duration brokerBackoffMax) {
    Require.between(prefix + ".maxAttempts", maxAttempts, 1, 1000);
    Require.positive(prefix + ".retryBase", retryBase);
    Require.positive(prefix + ".brokerBackoffBase", brokerBackoffBase);
    Require.atLeast(prefix + ".retryMax", retryMax, retryBase, prefix + ".retryBase (" + retryBase + ")");
    Require.atLeast(prefix + ".brokerBackoffMax", brokerBackoffMax, brokerBackoffBase,
        prefix + ".brokerBackoffBase (" + brokerBackoffBase + ")");
    return new DeliverySettings(maxAttempts, retryBase, retryMax, brokerBackoffBase, brokerBackoffMax);
  }
}
