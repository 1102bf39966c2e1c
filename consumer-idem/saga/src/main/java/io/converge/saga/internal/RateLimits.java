package io.converge.saga.internal;

import io.converge.saga.CompensationRate;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The compensation rate limits of one coordinator instance: a {@link TokenBucket} per participant, with a rate
 * per participant or the default one. Thread-safe.

 */
public final class RateLimits {

  private final CompensationRate defaultRate;
  private final Map<String, CompensationRate> rates;
  private final LongSupplier nanos;
  private final Map<String, TokenBucket> buckets = new ConcurrentHashMap<>();

  /** Limits with {@code rates} per participant, else {@code defaultRate}, on the time source {@code nanos}. */
  public RateLimits(CompensationRate defaultRate, Map<String, CompensationRate> rates, LongSupplier nanos) {
    this.defaultRate = defaultRate;
    this.rates = Map.copyOf(rates);
    this.nanos = nanos;
  }

  /** Takes a token of {@code participant}. @return 0 when taken, else the nanoseconds until one will be there */
  public long tryAcquire(String participant) {
    return buckets.computeIfAbsent(participant, p -> {
      CompensationRate r = rates.getOrDefault(p, defaultRate);
      return new TokenBucket(r.perSecond(), r.burst(), nanos);
    }).tryAcquire();
  }
}
