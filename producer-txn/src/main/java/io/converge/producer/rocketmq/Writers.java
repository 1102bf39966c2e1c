package io.converge.producer.rocketmq;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Stopping the daemon writer threads of {@link EndLanes} and {@link EndRecorder}. Stateless. */
final class Writers {

  private Writers() {
  }

  /**
   * Waits for {@code threads} to finish what they were told to finish, all together at most {@code grace}
   * (at least 1 ms each), then interrupts them. An interrupt of the caller ends the wait and is kept.
   */
  static void stop(List<Thread> threads, Duration grace) {
    long deadline = System.nanoTime() + grace.toNanos();
    for (Thread t : threads) {
      try {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      t.interrupt();
    }
  }
}
