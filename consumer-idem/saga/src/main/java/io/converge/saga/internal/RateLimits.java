package io.converge.saga.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The compensation rate limits of one coordinator instance: a {@link TokenBucket} per participant, with a rate
 * per participant or the default one. Thread-safe.

 */
public final class RateLimits {

  /**
   * A rate.
   *
   * @param perSecond tokens a second
   * @param burst tokens saved up at most (the bucket's size)
   */
  public record Rate(double perSecond, int burst) {
  }

  private final Rate defaultRate;
  private final Map<String, Rate> rates;
  private final LongSupplier nanos;
  private final Map<String, TokenBucket> buckets = new ConcurrentHashMap<>();

  /** Limits with {@code rates} per participant, else {@code defaultRate}, on the time source {@code nanos}. */
  public RateLimits(Rate defaultRate, Map<String, Rate> rates, LongSupplier nanos) {
    this.defaultRate = defaultRate;
    this.rates = Map.copyOf(rates);
    this.nanos = nanos;
  }

  /** Takes a token of {@code participant}. @return 0 when taken, else the nanoseconds until one will be there */
  public long tryAcquire(String participant) {
    return buckets.computeIfAbsent(participant, p -> {
      Rate r = rates.getOrDefault(p, defaultRate);
      return new TokenBucket(r.perSecond(), r.burst(), nanos);
    }).tryAcquire();
  }
}
