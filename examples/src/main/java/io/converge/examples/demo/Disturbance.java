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

  /** Cancels what is still to come and waits until every server is back. */
  @Override
  void close() throws InterruptedException;
}
