package io.converge.examples.demo;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Stops a fault-injecting run between its steps: the run {@linkplain #pause pauses} between injections and
 * returns as soon as it is {@linkplain #cancel cancelled}. Thread-safe.
 */
public final class Cancellation {

  private final CountDownLatch cancelled = new CountDownLatch(1);

  /** Cancels the run: a pause under way returns at once, and every later one too. */
  public void cancel() {
    cancelled.countDown();
  }

  /**
   * Sleeps {@code d} unless cancelled.
   *
   * @return true when cancelled (or interrupted: the interrupt is kept on the thread)
   */
  public boolean pause(Duration d) {
    try {
      return cancelled.await(d.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }
}
