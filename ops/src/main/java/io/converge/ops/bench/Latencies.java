package io.converge.ops.bench;

import java.util.Arrays;

/**
 * The latencies of a scenario's operations, recorded by the scenario itself (e.g. from a request to its
 * effect), summarised as percentiles. {@link BenchRunner} clears them after the warm-up and summarises
 * them after the measured runs. Thread-safe.
 */
public final class Latencies {

  /** The median and 99th percentile of {@code count} operations, in milliseconds. */
  public record Percentiles(double p50Millis, double p99Millis, int count) {
  }

  private long[] nanos = new long[1024];
  private int size;

  /** Records one operation that took {@code nanos} nanoseconds. */
  public synchronized void record(long nanos) {
    if (size == this.nanos.length) {
      this.nanos = Arrays.copyOf(this.nanos, size * 2);
    }
    this.nanos[size++] = nanos;
  }

  /** Forgets what was recorded. */
  public synchronized void clear() {
    size = 0;
  }

  /** The percentiles of what was recorded since the last {@link #clear}; null when nothing was. */
  public synchronized Percentiles percentiles() {
    if (size == 0) {
      return null;
    }
    long[] sorted = Arrays.copyOf(nanos, size);
    Arrays.sort(sorted);
    return new Percentiles(rank(sorted, 0.50) / 1e6, rank(sorted, 0.99) / 1e6, size);
  }

  /** The nearest-rank percentile {@code q} of {@code sorted}. */
  private static long rank(long[] sorted, double q) {
    int index = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }
}
