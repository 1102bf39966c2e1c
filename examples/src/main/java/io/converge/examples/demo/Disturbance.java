package io.converge.examples.demo;

import java.time.Duration;

/**
 * What a run plays against the platform while its order traffic runs: the demo's outages ({@link OutageRun}) or a
 * chaos schedule. {@link #close()} leaves every server up.
 */
public interface Disturbance extends AutoCloseable {

  /** Starts in the background; returns at once. */
  void begin();

  /** Waits for the end (at most its planned length plus {@code slack}). */
  void awaitEnd(Duration slack) throws InterruptedException;

  /**
   * Waits, before the run waits for quiescence and reconciles, for what the disturbance still does after the traffic
   * in the background (a chaos run's late deliveries, while the run's own duplicates and payments went on); default:
   * nothing to wait for.
   */
  default void awaitLate() throws InterruptedException {
  }

  /**
   * How many orders this disturbance made the orchestrated saga cancel by its global timeout on purpose (a chaos run's
   * TCC Try held past it), read once the run settled: the reconciliation requires exactly that many canceled by the
   * timeout, so a saga stuck until its deadline for any other reason fails it; default none.
   */
  default long sagaTimeoutCancels() throws java.sql.SQLException {
    return 0;
  }

  /** Cancels what is still to come and waits until every server is back. */
  @Override
  void close() throws InterruptedException;
}
