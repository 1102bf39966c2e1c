package io.converge.saga.internal;

import java.util.function.LongSupplier;

/**
 * A token bucket: {@code ratePerSecond} tokens a second, at most {@code burst} saved up. Time comes from an
 * injected nanosecond source, so tests count instead of sleeping. Thread-safe.
 */
public final class TokenBucket {

  private final double ratePerNano;
  private final double burst;
  private final LongSupplier nanos;
  private double tokens;
  private long last;

  /** A full bucket. */
  public TokenBucket(double ratePerSecond, int burst, LongSupplier nanos) {
    this.ratePerNano = ratePerSecond / 1e9;
    this.burst = burst;
    this.nanos = nanos;
    this.tokens = burst;
    this.last = nanos.getAsLong();
  }

  /** Takes a token when one is there. @return 0 when taken, else the nanoseconds until the next token */
  public synchronized long tryAcquire() {
    long now = nanos.getAsLong();
    tokens = Math.min(burst, tokens + (now - last) * ratePerNano);
    last = now;
    if (tokens >= 1.0) {
      tokens -= 1.0;
      return 0;
    }
    return Math.max(1, (long) Math.ceil((1.0 - tokens) / ratePerNano));
  }
}
