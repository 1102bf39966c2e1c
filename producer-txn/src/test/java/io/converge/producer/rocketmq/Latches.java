package io.converge.producer.rocketmq;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A latch waited on inside a stand-in for a broker call or a unit of work, where an interrupt must not throw. */
final class Latches {

  private Latches() {
  }

  /** Waits for {@code latch} at most {@code timeout}; an interrupt ends the wait and is kept. */
  static void awaitQuietly(CountDownLatch latch, Duration timeout) {
    try {
      latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
