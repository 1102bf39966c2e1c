package io.converge.saga.tcc;

import io.converge.core.internal.Require;
import java.time.Duration;

/**
 * How long a participant keeps its barrier rows, tied to the guarantee: a Try's row written by its Cancel fences a
 * late Try only while it exists, so the rows must outlive every Try the coordinator can still send, that is its
 * global timeout plus its retry window. Immutable; validated on construction.
 *
 * @param retention how long a finished branch's rows are kept after its Confirm or Cancel was written, by the
 *     database's clock; at least {@link #MIN_RETENTION}; default {@link #DEFAULT_RETENTION}
 * @param globalTimeout the coordinator's global timeout (a Try is sent at most this long after the global transaction
 *     began), or null when not configured
 * @param retryWindow how long the coordinator may still re-send a Try past the global timeout, or null when not
 *     configured
 */
public record TccRetention(Duration retention, Duration globalTimeout, Duration retryWindow) {

  /**
   * The shortest retention: 6 hours, longer than a broker's redelivery window (about 4 h 46 min): a command
   * redelivered after its rows were purged would run again.
   */
  public static final Duration MIN_RETENTION = Duration.ofHours(6);

  /** The default retention: 7 days. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);

  /**
   * Validates: a retention of at least {@link #MIN_RETENTION}; the coordinator's window given whole (both durations or neither), each positive
   * or zero; and, when given, a retention at least {@code globalTimeout + retryWindow}.
   *
   * @throws IllegalArgumentException naming the setting and quoting the bad value
   */
  public TccRetention {
    Require.atLeast("tcc.retention", retention, MIN_RETENTION,
        MIN_RETENTION + " (longer than the broker's redelivery window)");
    Require.that((globalTimeout == null) == (retryWindow == null), "tcc.retention.coordinator",
        "give both the global timeout and the retry window, or neither",
        "globalTimeout=" + globalTimeout + ", retryWindow=" + retryWindow);
    if (globalTimeout != null) {
      Require.notNegative("tcc.retention.globalTimeout", globalTimeout);
      Require.notNegative("tcc.retention.retryWindow", retryWindow);
      Duration window = globalTimeout.plus(retryWindow);
      Require.that(retention.compareTo(window) >= 0, "tcc.retention",
          "be at least the coordinator's global timeout + retry window (" + globalTimeout + " + " + retryWindow
              + " = " + window + "): a shorter one purges the row that fences a Try the coordinator may still send",
          retention);
    }
  }

  /** The default retention, no coordinator window. */
  public static TccRetention defaults() {
    return of(DEFAULT_RETENTION);
  }

  /** {@code retention}, no coordinator window. */
  public static TccRetention of(Duration retention) {
    return new TccRetention(retention, null, null);
  }

  /**
   * This retention checked against a coordinator's window.
   *
   * @throws IllegalArgumentException when the retention is shorter than {@code globalTimeout + retryWindow}
   */
  public TccRetention covering(Duration globalTimeout, Duration retryWindow) {
    return new TccRetention(retention, globalTimeout, retryWindow);
  }
}
