package io.converge.outbox.internal;

import io.converge.producer.support.Backoff;
import io.converge.outbox.Outbox;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.OutboxRelayBuilder.Settings;
import io.converge.producer.DatabaseUnavailableException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The polling relay: one thread that runs {@link RelayCycle}s back to back while there is work, polls
 * adaptively when idle, backs off exponentially with jitter while the broker or the database is
 * unavailable, and now and then reads the metrics and purges published rows. Thread-safe.
 */
public final class PollingRelay implements OutboxRelay {

  private static final Logger LOG = LoggerFactory.getLogger(PollingRelay.class);

  private final Settings settings;
  private final RelayCycle cycle;
  private final Backoff outage;
  private final Outbox outbox;
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Object wake = new Object();
  private volatile Thread thread;

  /** A relay with {@code settings}, not started. */
  public PollingRelay(Settings settings) {
    this.settings = settings;
    this.cycle = new RelayCycle(settings, new Backoff(settings.retryBase(), Duration.ofMinutes(5), () -> ThreadLocalRandom.current().nextDouble()),
        Duration.ZERO);
    this.outage = new Backoff(settings.brokerBackoffBase(), settings.brokerBackoffMax(), () -> ThreadLocalRandom.current().nextDouble());
    this.outbox = Outbox.on(settings.dataSource());
  }

  @Override
  public void start() {
    if (closed.get()) {
      throw new IllegalStateException("Outbox relay " + settings.name() + " is closed");
    }
    if (started.compareAndSet(false, true)) {
      Thread t = new Thread(this::loop, "converge-" + settings.name());
      t.setDaemon(true);
      thread = t;
      t.start();
      LOG.debug("Outbox relay {} started", settings.name());
    }
  }

  @Override
  public int drainOnce() {
    try (Connection c = settings.dataSource().getConnection()) {
      return cycle.run(c).published();
    } catch (SQLException e) {
      throw new DatabaseUnavailableException("Outbox relay " + settings.name() + " cannot drain the outbox", null, e);
    }
  }

  private void loop() {
    Duration idle = settings.idlePollMin();
    int failures = 0;
    long nextPurge = System.nanoTime() + settings.purgeInterval().toNanos();
    long nextMetrics = System.nanoTime();
    Connection c = null;
    while (!closed.get()) {
      Duration pause;
      try {
        if (c == null) {
          c = settings.dataSource().getConnection();
        }
        RelayCycle.Result r = cycle.run(c);
        if (r.published() > 0) {
          settings.metrics().published(r.published());
        }
        if (r.brokerUnavailable()) {
          failures++;
          pause = outage.delay(failures);
          if (failures == 1 || failures % 10 == 0) {
            LOG.warn("Outbox relay {}: broker unavailable through {} ({} failures in a row); retrying in {}",
                settings.name(), settings.sink().name(), failures, pause);
          }
        } else {
          if (failures > 0) {
            LOG.warn("Outbox relay {}: broker available again after {} failures", settings.name(), failures);
          }
          failures = 0;
          if (r.published() + r.refused() >= settings.batchSize()) {
            pause = Duration.ZERO; // more work is waiting
            idle = settings.idlePollMin();
          } else if (r.published() + r.refused() > 0) {
            idle = settings.idlePollMin();
            pause = idle;
          } else {
            pause = idle;
            idle = min(idle.multipliedBy(2), settings.idlePollMax());
          }
        }
      } catch (SQLException | RuntimeException e) {
        failures++;
        pause = outage.delay(failures);
        LOG.warn("Outbox relay {}: cycle failed ({}); retrying in {}", settings.name(), e.toString(), pause);
        c = closeQuietly(c);
      }
      long now = System.nanoTime();
      if (now >= nextMetrics) {
        nextMetrics = now + settings.metricsInterval().toNanos();
        readMetrics();
      }
      if (!settings.purgeInterval().isZero() && now >= nextPurge) {
        nextPurge = now + settings.purgeInterval().toNanos();
        purge();
      }
      sleep(pause);
    }
    closeQuietly(c);
  }

  private void readMetrics() {
    try {
      settings.metrics().lag(outbox.lag());
      settings.metrics().parkedNow(outbox.parkedCount());
    } catch (RuntimeException e) {
      LOG.debug("Outbox relay {}: cannot read metrics: {}", settings.name(), e.toString());
    }
  }

  private void purge() {
    try {
      long n = outbox.purge(settings.retention(), settings.purgeBatchSize(), total -> { });
      if (n > 0) {
        LOG.debug("Outbox relay {} purged {} published rows", settings.name(), n);
      }
    } catch (RuntimeException e) {
      LOG.warn("Outbox relay {}: purge failed: {}", settings.name(), e.toString());
    }
  }

  private void sleep(Duration pause) {
    if (pause.isZero()) {
      return;
    }
    synchronized (wake) {
      try {
        if (!closed.get()) {
          TimeUnit.NANOSECONDS.timedWait(wake, pause.toNanos());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        closed.set(true);
      }
    }
  }

  private static Connection closeQuietly(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        LOG.debug("Closing a broken relay connection failed: {}", e.toString());
      }
    }
    return null;
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  @Override
  public String name() {
    return settings.name();
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      synchronized (wake) {
        wake.notifyAll();
      }
      Thread t = thread;
      if (t != null) {
        try {
          t.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      settings.sink().close();
      LOG.debug("Outbox relay {} closed", settings.name());
    }
  }
}
