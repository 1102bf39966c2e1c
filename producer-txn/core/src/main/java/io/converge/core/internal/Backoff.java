package io.converge.core.internal;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * The one exponential backoff of Converge: the n-th consecutive failure has the ceiling
 * {@code min(max, base·multiplier^(n-1))}, and waits that ceiling times a random factor in
 * {@code [low, high]}. Two jitters are in use: the relays' "half fixed, half random"
 * ({@code [ceiling/2, ceiling]}, {@link #Backoff(Duration, Duration, DoubleSupplier)}: never a retry at
 * once, relays spread out) and the consumer's "±jitter" around the ceiling ({@link #withJitter}).
 * Immutable; thread-safe when its random source is.
 */
public final class Backoff {

  private final Duration base;
  private final Duration max;
  private final double multiplier;
  private final double low;
  private final double high;
  private final DoubleSupplier random;

  private Backoff(Duration base, Duration max, double multiplier, double low, double high, DoubleSupplier random) {
    this.base = base;
    this.max = max;
    this.multiplier = multiplier;
    this.low = low;
    this.high = high;
    this.random = random;
  }

  /**
   * Doubling from {@code base} up to {@code max}, each delay random in {@code [ceiling/2, ceiling]};
   * {@code random} yields values in [0, 1).
   */
  public Backoff(Duration base, Duration max, DoubleSupplier random) {
    this(base, max, 2.0, 0.5, 1.0, random);
  }

  /**
   * Growing by {@code multiplier} from {@code base} up to {@code max}, each delay the ceiling spread by
   * {@code ±jitter} (0.2: ±20 %; the spread delay may exceed {@code max} by the jitter).
   *
   * @param random values in [0, 1) for {@link #delay(int)}; may be null when only
   *     {@link #delay(int, double)} and {@link #ceiling(int)} are used
   */
  public static Backoff withJitter(Duration base, Duration max, double multiplier, double jitter,
      DoubleSupplier random) {
    return new Backoff(base, max, multiplier, 1.0 - jitter, 1.0 + jitter, random);
  }

  /** The ceiling after the {@code failures}-th consecutive failure (1 for the first; less counts as 1), before jitter. */
  public Duration ceiling(int failures) {
    double millis = base.toMillis() * Math.pow(multiplier, Math.max(1, failures) - 1);
    return Duration.ofMillis((long) Math.min(max.toMillis(), millis));
  }

  /** The delay after the {@code failures}-th consecutive failure, with {@code random} in [0, 1) placing it in the spread. */
  public Duration delay(int failures, double random) {
    double factor = low + random * (high - low);
    return Duration.ofMillis(Math.max(0, Math.round(ceiling(failures).toMillis() * factor)));
  }

  /** The delay after the {@code failures}-th consecutive failure (1 for the first), placed by the random source. */
  public Duration delay(int failures) {
    return delay(failures, random.getAsDouble());
  }
}
