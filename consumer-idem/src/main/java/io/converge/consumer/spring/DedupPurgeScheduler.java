package io.converge.consumer.spring;

import io.converge.consumer.DedupPurger;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/** Runs {@link DedupPurger#purgeExpired} every {@code converge.consumer.dedup.purge-interval}, on by default. */
final class DedupPurgeScheduler implements SmartLifecycle {

  private static final Logger log = LoggerFactory.getLogger(DedupPurgeScheduler.class);
  private static final int MAX_BATCHES_PER_RUN = 1_000;

  private final DedupPurger purger;
  private final Duration interval;
  private ScheduledExecutorService executor;

  DedupPurgeScheduler(DedupPurger purger, Duration interval) {
    if (interval == null || interval.toSeconds() < 1) {
      throw new IllegalArgumentException("converge.consumer.dedup.purge-interval must be at least 1s, but was " + interval);
    }
    this.purger = purger;
    this.interval = interval;
  }

  @Override
  public synchronized void start() {
    executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "converge-dedup-purge");
      t.setDaemon(true);
      return t;
    });
    executor.scheduleWithFixedDelay(() -> {
      try {
        purger.purgeExpired(MAX_BATCHES_PER_RUN);
      } catch (RuntimeException e) {
        log.warn("Dedup purge failed, will retry in {}", interval, e);
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
