package io.converge.producer.support;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with full jitter: the n-th consecutive failure waits a random time in
 * {@code [base·2^(n-1) / 2, base·2^(n-1)]}, capped at {@code max}. Half the delay is kept fixed so
 * that a failure never retries at once (no busy loop), half is random so that relays spread out.
 * Immutable; thread-safe when its random source is.
 */
public final class Backoff {

  private final Duration base;
  private final Duration max;
  private final DoubleSupplier random;

  /** Backoff from {@code base} up to {@code max}; {@code random} yields values in [0, 1). */
  public Backoff(Duration base, Duration max, DoubleSupplier random) {
    this.base = base;
    this.max = max;
    this.random = random;
  }

  /** The delay after the {@code failures}-th consecutive failure (1 for the first). */
  public Duration delay(int failures) {
    int n = Math.max(1, Math.min(failures, 31));
    long ceiling = base.toMillis();
    for (int i = 1; i < n && ceiling < max.toMillis(); i++) {
      ceiling *= 2;
    }
    ceiling = Math.min(ceiling, max.toMillis());
    long half = ceiling / 2;
    return Duration.ofMillis(half + (long) (random.getAsDouble() * (ceiling - half + 1)));
  }
}
