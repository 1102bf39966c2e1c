package io.converge.outbox.internal;

import io.converge.core.internal.DatabaseErrors;
import io.converge.outbox.DeliverySettings;
import io.converge.outbox.Outbox;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.OutboxRelayBuilder.Settings;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The polling relay: one thread that runs {@link RelayCycle}s at the {@link Pacing} (back to back while
 * there is work, adaptive idle polls, the outage backoff while the broker or the database is
 * unavailable), and now and then reads the metrics and purges published rows. Time comes from an
 * injected {@link Clock} and pauses from an injected {@link Sleeper}. Thread-safe.
 */
public final class PollingRelay implements OutboxRelay {

  private static final Logger LOG = LoggerFactory.getLogger(PollingRelay.class);

  private final Settings settings;
  private final DeliveryPolicy policy;
  private final RelayCycle cycle;
  private final Outbox outbox;
  private final Clock clock;
  private final Sleeper sleeper;
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile Thread thread;

  /** A relay with {@code settings}, not started, on the system clock. */
  public PollingRelay(Settings settings) {
    this(settings, Clock.systemUTC(), Sleeper.wakeable());
  }

  /** A relay with {@code settings}, not started, reading time from {@code clock} and pausing with {@code sleeper}. */
  public PollingRelay(Settings settings, Clock clock, Sleeper sleeper) {
    this.settings = settings;
    DeliverySettings d = settings.delivery();
    this.policy = DeliveryPolicy.of(new OutboxRows(), d.maxAttempts(), d.retryBase(), d.retryMax(),
        d.brokerBackoffBase(), d.brokerBackoffMax(), settings.metrics());
    this.cycle = new RelayCycle(settings.sink(), settings.batchSize(), policy, Duration.ZERO);
    this.outbox = Outbox.on(settings.dataSource());
    this.clock = clock;
    this.sleeper = sleeper;
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
      throw DatabaseErrors.translate("Outbox relay " + settings.name() + " cannot drain the outbox", null, e);
    }
  }

  private void loop() {
    Pacing pacing = new Pacing(settings, policy);
    Instant nextPurge = clock.instant().plus(settings.purgeInterval());
    Instant nextMetrics = clock.instant();
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
        pause = pacing.after(r);
      } catch (SQLException | RuntimeException e) {
        pause = pacing.afterFailure(e);
        c = closeQuietly(c);
      }
      Instant now = clock.instant();
      if (!now.isBefore(nextMetrics)) {
        nextMetrics = now.plus(settings.metricsInterval());
        readMetrics();
      }
      if (!settings.purgeInterval().isZero() && !now.isBefore(nextPurge)) {
        nextPurge = now.plus(settings.purgeInterval());
        purge();
      }
      try {
        sleeper.sleep(pause);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        closed.set(true);
      }
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
      long n = outbox.purge(settings.retention(), settings.purgeBatchSize(), total -> {
      });
      if (n > 0) {
        LOG.debug("Outbox relay {} purged {} published rows", settings.name(), n);
      }
    } catch (RuntimeException e) {
      LOG.warn("Outbox relay {}: purge failed: {}", settings.name(), e.toString());
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

  @Override
  public String name() {
    return settings.name();
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      sleeper.wake();
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
