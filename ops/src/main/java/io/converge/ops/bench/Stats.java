package io.converge.ops.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Median and spread of repeated measurements. Immutable; pure. */
public record Stats(double median, double min, double max, int n) {

  /**
   * The statistics of {@code values}.
   *
   * @throws IllegalArgumentException when there are none
   */
  public static Stats of(List<Double> values) {
    if (values == null || values.isEmpty()) {
      throw new IllegalArgumentException("at least one measurement is needed, but there were none");
    }
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    return new Stats(median, sorted.get(0), sorted.get(n - 1), n);
  }

  /** The spread as a fraction of the median: (max - min) / median; 0 when the median is 0. */
  public double relativeSpread() {
    return median == 0 ? 0 : (max - min) / median;
  }

  /** Ratios a[i] / b[i], pair by pair (runs of a and b interleaved, so noise hits both alike). */
  public static List<Double> ratios(List<Double> a, List<Double> b) {
    if (a.size() != b.size()) {
      throw new IllegalArgumentException(
          "pairs need as many runs of each side, but were " + a.size() + " and " + b.size());
    }
    List<Double> ratios = new ArrayList<>(a.size());
    for (int i = 0; i < a.size(); i++) {
      ratios.add(b.get(i) == 0 ? Double.NaN : a.get(i) / b.get(i));
    }
    return ratios;
  }
}
