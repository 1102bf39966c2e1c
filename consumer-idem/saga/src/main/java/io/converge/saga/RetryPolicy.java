package io.converge.saga;

import io.converge.core.internal.Backoff;
import io.converge.core.internal.Require;
import java.time.Duration;

/**
 * How often the coordinator asks a participant before it stops asking: {@code maxAttempts} sends of a step's
 * command in all (re-sends after a timeout and new attempts after a technical failure count alike), with an
 * exponential backoff ({@link Backoff}, doubling, "half fixed, half random") between a technical failure and the
 * next attempt. Immutable.
 *
 * @param maxAttempts sends of one step, 1..100; default {@value #DEFAULT_MAX_ATTEMPTS}
 * @param initialBackoff the wait after the first technical failure, 1 ms..1 h; default 200 ms
 * @param maxBackoff the cap of the wait, at least {@code initialBackoff}, at most 1 h; default 10 s
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {

  /** The default number of sends (the article's "three failures, then a person" is the compensation's rule). */
  public static final int DEFAULT_MAX_ATTEMPTS = 5;

  /** Validates; messages name the property and quote the bad value. */
  public RetryPolicy {
    Require.between("retry.maxAttempts", maxAttempts, 1, 100);
    Require.between("retry.initialBackoff", initialBackoff, Duration.ofMillis(1), Duration.ofHours(1), "1 ms and 1 h");
    Require.that(maxBackoff != null && maxBackoff.compareTo(initialBackoff) >= 0
        && maxBackoff.compareTo(Duration.ofHours(1)) <= 0, "retry.maxBackoff",
        "be between retry.initialBackoff (" + initialBackoff + ") and 1 h", maxBackoff);
  }

  /** 5 sends, 200 ms doubling up to 10 s. */
  public static RetryPolicy defaults() {
    return new RetryPolicy(DEFAULT_MAX_ATTEMPTS, Duration.ofMillis(200), Duration.ofSeconds(10));
  }

  /** {@code attempts} sends with the default backoff. */
  public static RetryPolicy attempts(int attempts) {
    return new RetryPolicy(attempts, Duration.ofMillis(200), Duration.ofSeconds(10));
  }

  /** The wait after the {@code failures}-th technical failure (1-based), random in {@code [ceiling/2, ceiling]}. */
  public Duration backoff(int failures) {
    return new Backoff(initialBackoff, maxBackoff, Math::random).delay(failures);
  }
}
