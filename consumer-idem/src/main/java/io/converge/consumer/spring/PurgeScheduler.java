package io.converge.consumer.spring;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs a bounded purge ({@code DedupPurger#purgeExpired}, {@code IdempotencyKeyPurger#purgeExpired})
 * every interval on its own daemon thread while the context runs; a failed run is logged and retried
 * at the next interval.
 */
final class PurgeScheduler implements SmartLifecycle {

  private static final Logger log = LoggerFactory.getLogger(PurgeScheduler.class);
  private static final int MAX_BATCHES_PER_RUN = 1_000;

  private final String name;
  private final IntToLongFunction purge;
  private final Duration interval;
  private ScheduledExecutorService executor;

  /**
   * @param name the thread's name, also in the log
   * @param purge called with the most batches a run may delete
   * @param intervalProperty the property named when {@code interval} is under 1 s
   */
  PurgeScheduler(String name, IntToLongFunction purge, Duration interval, String intervalProperty) {
    if (interval == null || interval.toSeconds() < 1) {
      throw new IllegalArgumentException(intervalProperty + " must be at least 1s, but was " + interval);
    }
    this.name = name;
    this.purge = purge;
    this.interval = interval;
  }

  @Override
  public synchronized void start() {
    executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    });
    executor.scheduleWithFixedDelay(() -> {
      try {
        purge.applyAsLong(MAX_BATCHES_PER_RUN);
      } catch (RuntimeException e) {
        log.warn("{} failed, will retry in {}", name, interval, e);
      }
    }, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public synchronized void stop() {
    if (executor != null) {
      executor.shutdownNow();
      executor = null;
    }
  }

  @Override
  public synchronized boolean isRunning() {
    return executor != null;
  }
}
