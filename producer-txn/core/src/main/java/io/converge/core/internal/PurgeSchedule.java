package io.converge.core.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one scheduler of Converge's purges: runs a purge every interval (fixed delay, first run after
 * one interval) on its own daemon thread until closed; a failed run is logged and retried at the next
 * interval. Thread-safe; {@link #close()} is idempotent.
 */
public final class PurgeSchedule implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PurgeSchedule.class);

  private final String name;
  private final ScheduledExecutorService executor;

  private PurgeSchedule(String name, Duration interval, LongSupplier purge) {
    this.name = name;
    this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    });
    long every = interval.toMillis();
    executor.scheduleWithFixedDelay(() -> run(purge, interval), every, every, TimeUnit.MILLISECONDS);
  }

  /**
   * Starts running {@code purge} every {@code interval}.
   *
   * @param name the thread's name, also in the log
   * @param interval positive
   * @param purge returns the number of rows it deleted
   */
  public static PurgeSchedule start(String name, Duration interval, LongSupplier purge) {
    Require.positive(name + ".interval", interval);
    return new PurgeSchedule(name, interval, Objects.requireNonNull(purge, "purge"));
  }

  private void run(LongSupplier purge, Duration interval) {
    try {
      long n = purge.getAsLong();
      if (n > 0) {
        LOG.debug("{} purged {} rows", name, n);
      }
    } catch (RuntimeException e) {
      LOG.warn("{} failed, will retry in {}", name, interval, e);
    }
  }

  /** Whether it still runs (false once closed). */
  public boolean isRunning() {
    return !executor.isShutdown();
  }

  /** Stops the schedule, interrupting a run in progress. */
  @Override
  public void close() {
    executor.shutdownNow();
  }
}
