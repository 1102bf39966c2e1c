package io.converge.outbox.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How a relay waits between its steps (idle polls, backoffs), injected so that tests control time: a
 * test passes one that records the pauses and returns at once. Implementations are thread-safe.
 */
public interface Sleeper {

  /** Waits {@code pause} (zero: not at all), or less when {@link #wake woken}. */
  void sleep(Duration pause) throws InterruptedException;

  /** Ends the current and every later {@link #sleep} at once (a closing relay); the default does nothing. */
  default void wake() {
  }

  /** {@link Thread#sleep}: interruptible, not wakeable. */
  Sleeper THREAD = pause -> {
    if (!pause.isZero()) {
      TimeUnit.NANOSECONDS.sleep(pause.toNanos());
    }
  };

  /** A new sleeper that waits on a monitor and that {@link #wake} ends for good. */
  static Sleeper wakeable() {
    return new Sleeper() {

      private boolean woken;

      @Override
      public synchronized void sleep(Duration pause) throws InterruptedException {
        if (!pause.isZero() && !woken) {
          TimeUnit.NANOSECONDS.timedWait(this, pause.toNanos());
        }
      }

      @Override
      public synchronized void wake() {
        woken = true;
        notifyAll();
      }
    };
  }
}
