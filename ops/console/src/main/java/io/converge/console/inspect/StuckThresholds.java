package io.converge.console.inspect;

import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * How long an item of each kind may wait before it is stuck. Immutable; {@link #with} returns a copy.
 * Defaults (the article's 1-5 minutes): 1 minute for what waits for a person or a relay (parked keys,
 * dead letters, tickets, RocketMQ units past their check-back, parked Pulsar recoveries, outbox lag), 5
 * minutes for what normally resolves on its own (open Pulsar transactions, Idempotency-Keys in progress,
 * intermediate entity states).
 */
public final class StuckThresholds {

  private static final Map<StuckKind, Duration> DEFAULTS;

  static {
    EnumMap<StuckKind, Duration> d = new EnumMap<>(StuckKind.class);
    for (StuckKind kind : StuckKind.values()) {
      d.put(kind, Duration.ofMinutes(1));
    }
    d.put(StuckKind.PULSAR_TXN, Duration.ofMinutes(5));
    d.put(StuckKind.IDEMPOTENCY_KEY, Duration.ofMinutes(5));
    d.put(StuckKind.STATE, Duration.ofMinutes(5));
    d.put(StuckKind.SAGA, Duration.ofMinutes(5));
    DEFAULTS = Collections.unmodifiableMap(d);
  }

  private final Map<StuckKind, Duration> thresholds;

  private StuckThresholds(Map<StuckKind, Duration> thresholds) {
    this.thresholds = thresholds;
  }

  /** The defaults. */
  public static StuckThresholds defaults() {
    return new StuckThresholds(DEFAULTS);
  }

  /**
   * A copy with {@code kind}'s threshold {@code threshold} (zero: every item is stuck).
   *
   * @throws IllegalArgumentException when it is negative, naming {@code console.thresholds.<kind>} and the value
   */
  public StuckThresholds with(StuckKind kind, Duration threshold) {
    Require.notNegative("console.thresholds." + kind.slug(), threshold);
    EnumMap<StuckKind, Duration> copy = new EnumMap<>(thresholds);
    copy.put(kind, threshold);
    return new StuckThresholds(Collections.unmodifiableMap(copy));
  }

  /** A copy with every kind's threshold {@code threshold}. */
  public StuckThresholds withAll(Duration threshold) {
    StuckThresholds t = this;
    for (StuckKind kind : StuckKind.values()) {
      t = t.with(kind, threshold);
    }
    return t;
  }

  /**
   * A copy with the thresholds of {@code overrides} (null: none), the other kinds keep theirs.
   *
   * @throws IllegalArgumentException when one is negative, as {@link #with(StuckKind, Duration)}
   */
  public StuckThresholds with(Map<StuckKind, Duration> overrides) {
    StuckThresholds t = this;
    if (overrides != null) {
      for (Map.Entry<StuckKind, Duration> e : overrides.entrySet()) {
        t = t.with(e.getKey(), e.getValue());
      }
    }
    return t;
  }

  /** The threshold of {@code kind}. */
  public Duration of(StuckKind kind) {
    return thresholds.get(kind);
  }

  @Override
  public String toString() {
    return "StuckThresholds" + thresholds;
  }
}
