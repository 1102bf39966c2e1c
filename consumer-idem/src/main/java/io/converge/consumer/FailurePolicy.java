package io.converge.consumer;

import io.converge.core.internal.Backoff;
import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.Objects;

/**
 * How a consumer treats technical failures: up to {@code maxAttempts} attempts per message (counted in
 * the database, so across redeliveries and instances), with exponential backoff and jitter between
 * them, then the dead-letter table and a ticket. An outage ({@link FailureKind#UNAVAILABLE}) counts no
 * attempt: the same message is run again after the same exponential backoff, capped at
 * {@code maxOutageBackoff} instead of {@code maxBackoff}, for as long as the outage lasts. Immutable.
 *
 * @param maxAttempts attempts before dead-lettering, 1..100; default {@value #DEFAULT_MAX_ATTEMPTS}
 * @param initialBackoff delay after the first failure, 1 ms..1 h; default 200 ms
 * @param maxBackoff the cap of the delay, at least {@code initialBackoff}; default 10 s
 * @param multiplier growth of the delay per attempt, 1.0..10.0; default 2.0
 * @param jitter the random spread of each delay, 0.0..1.0 (0.2 means ±20 %); default 0.2
 * @param maxOutageBackoff the cap of the delay between runs while the database or a broker is
 *     unavailable, at least {@code initialBackoff}, at most 1 h; default {@value #DEFAULT_MAX_OUTAGE_BACKOFF_SECONDS} s
 */
public record FailurePolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, double multiplier,
    double jitter,
    Duration maxOutageBackoff) {

  /** The default number of attempts (the article's "three failures, then a person"). */
  public static final int DEFAULT_MAX_ATTEMPTS = 3;

  /** The default cap of the backoff during an outage, in seconds. */
  public static final int DEFAULT_MAX_OUTAGE_BACKOFF_SECONDS = 30;

  /** Validates every field; messages name the property and quote the bad value. */
  public FailurePolicy {
    Objects.requireNonNull(initialBackoff, "initialBackoff");
    Objects.requireNonNull(maxBackoff, "maxBackoff");
    Objects.requireNonNull(maxOutageBackoff, "maxOutageBackoff");
    Require.between("policy.maxAttempts", maxAttempts, 1, 100);
    Require.that(initialBackoff.toMillis() >= 1 && initialBackoff.compareTo(Duration.ofHours(1)) <= 0,
        "policy.initialBackoff", "be between 1ms and 1h", initialBackoff);
    Require.atLeast("policy.maxBackoff", maxBackoff, initialBackoff, "initialBackoff (" + initialBackoff + ")");
    Require.that(multiplier >= 1.0 && multiplier <= 10.0, "policy.multiplier", "be between 1.0 and 10.0", multiplier);
    Require.that(jitter >= 0.0 && jitter <= 1.0, "policy.jitter", "be between 0.0 and 1.0", jitter);
    Require.that(
        maxOutageBackoff.compareTo(initialBackoff) >= 0 && maxOutageBackoff.compareTo(Duration.ofHours(1)) <= 0,
        "policy.maxOutageBackoff", "be between initialBackoff (" + initialBackoff + ") and 1h", maxOutageBackoff);
  }

  /** A policy with the default {@code maxOutageBackoff} (30 s, or {@code initialBackoff} when that is longer). */
  public FailurePolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, double multiplier,
      double jitter) {
    this(maxAttempts, initialBackoff, maxBackoff, multiplier, jitter, defaultOutageCap(initialBackoff));
  }

  private static Duration defaultOutageCap(Duration initialBackoff) {
    Duration d = Duration.ofSeconds(DEFAULT_MAX_OUTAGE_BACKOFF_SECONDS);
    return initialBackoff != null && initialBackoff.compareTo(d) > 0 ? initialBackoff : d;
  }

  /** 3 attempts, 200 ms doubling up to 10 s, ±20 % jitter; outages back off up to 30 s. */
  public static FailurePolicy defaults() {
    return new FailurePolicy(DEFAULT_MAX_ATTEMPTS, Duration.ofMillis(200), Duration.ofSeconds(10), 2.0, 0.2,
        Duration.ofSeconds(DEFAULT_MAX_OUTAGE_BACKOFF_SECONDS));
  }

  /** A copy with {@code maxAttempts}. */
  public FailurePolicy withMaxAttempts(int attempts) {
    return new FailurePolicy(attempts, initialBackoff, maxBackoff, multiplier, jitter, maxOutageBackoff);
  }

  /** A copy with the given backoff bounds (the outage cap is raised to {@code initial} if it is shorter). */
  public FailurePolicy withBackoff(Duration initial, Duration max) {
    Duration outage = initial != null && maxOutageBackoff.compareTo(initial) < 0 ? initial : maxOutageBackoff;
    return new FailurePolicy(maxAttempts, initial, max, multiplier, jitter, outage);
  }

  /** A copy with the cap of the backoff during an outage. */
  public FailurePolicy withMaxOutageBackoff(Duration max) {
    return new FailurePolicy(maxAttempts, initialBackoff, maxBackoff, multiplier, jitter, max);
  }

  /**
   * The delay after failed attempt number {@code attempt} (1-based), before jitter:
   * {@code min(maxBackoff, initialBackoff * multiplier^(attempt-1))}.
   */
  public Duration baseDelay(int attempt) {
    return backoff(maxBackoff).ceiling(attempt);
  }

  /** {@link #baseDelay} spread by {@code jitter} using {@code random} in [0, 1). */
  public Duration delay(int attempt, double random) {
    return backoff(maxBackoff).delay(attempt, random);
  }

  /**
   * The delay before run number {@code wait + 1} during an outage ({@code wait} is 1-based), spread by
   * {@code jitter} using {@code random} in [0, 1): {@code min(maxOutageBackoff, initialBackoff * multiplier^(wait-1))}.
   */
  public Duration outageDelay(int wait, double random) {
    return backoff(maxOutageBackoff).delay(wait, random);
  }

  private Backoff backoff(Duration cap) {
    return Backoff.withJitter(initialBackoff, cap, multiplier, jitter, null);
  }
}
