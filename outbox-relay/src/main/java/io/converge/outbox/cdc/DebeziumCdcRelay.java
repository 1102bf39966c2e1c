package io.converge.outbox.cdc;

import io.converge.outbox.Outbox;
import io.converge.outbox.OutboxRelayBuilder.Settings;
import io.converge.producer.support.Backoff;
import io.converge.outbox.internal.RelayCycle;
import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.ConvergeException;
import io.converge.producer.schema.Migrations;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link CdcRelay} on Debezium's embedded engine. The stream and the sweeper publish through the polling
 * relay's {@link RelayCycle} (per-key head-of-line claim, conditional mark), one at a time ({@link #sending}).
 * The engine runs on a daemon thread of its own thread group (Debezium's pools are created from it, so
 * they are in that group too); a supervisor (one daemon thread) restarts a failed engine, runs the
 * sweeper, reads {@code cdc.lag} and closes the relay when only its threads keep the JVM alive.
 */
final class DebeziumCdcRelay implements CdcRelay, DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> {

  private static final Logger LOG = LoggerFactory.getLogger(DebeziumCdcRelay.class);

  private final CdcRelay.Builder settings;
  private final PGSimpleDataSource db;
  private final String slot;
  private final CdcSlot slots;
  private final RelayCycle stream;
  private final RelayCycle sweeper;
  private final Backoff outage;
  private final Backoff retry;
  private final ThreadGroup threads;
  private final Object sending = new Object();
  /** Guards {@link #engine} against {@link #close} racing a restart: closing is set before it is read. */
  private final Object engineLock = new Object();
  private final AtomicLong published = new AtomicLong();
  private final AtomicLong parked = new AtomicLong();
  private final AtomicLong restarts = new AtomicLong();
  private final AtomicInteger failuresInARow = new AtomicInteger();
  private volatile String lastFailure;
  private volatile boolean running;
  private volatile boolean closing;
  private DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
  private volatile Thread engineThread;
  private ScheduledExecutorService supervisor;

  DebeziumCdcRelay(CdcRelay.Builder settings) {
    this.settings = settings;
    this.slot = "converge_cdc_" + settings.name;
    this.db = new PGSimpleDataSource();
    db.setUrl(settings.jdbcUrl);
    db.setUser(settings.user);
    db.setPassword(settings.password);
    db.setCurrentSchema(settings.schema);
    this.slots = new CdcSlot(db, slot, settings.schema);
    this.outage = new Backoff(settings.outageBase, settings.outageMax, () -> ThreadLocalRandom.current().nextDouble());
    this.retry = new Backoff(settings.retryBase, settings.retryMax, () -> ThreadLocalRandom.current().nextDouble());
    Settings cycle = new Settings("cdc-" + settings.name, db, settings.sink, 1000, settings.maxAttempts, settings.retryBase,
        settings.outageBase, settings.outageMax, Duration.ofMillis(10), Duration.ofMillis(200), Duration.ofDays(1), Duration.ZERO,
        1000, settings.metricsInterval, settings.metrics);
    this.stream = new RelayCycle(cycle, retry, Duration.ZERO);
    this.sweeper = new RelayCycle(cycle, retry, settings.sweepAge);
    this.threads = new ThreadGroup("converge-cdc-" + settings.name);
  }

  @Override
  public synchronized void start() {
    if (supervisor != null) {
      return;
    }
    closing = false;
    Migrations.apply(db, "cdc");
    slots.create(); // before the engine: the stream starts here, rows committed before are the sweeper's
    supervisor = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "converge-cdc-" + settings.name + "-supervisor"));
    launch();
    long sweep = settings.sweepInterval.toMillis();
    supervisor.scheduleWithFixedDelay(this::sweep, sweep, sweep, TimeUnit.MILLISECONDS);
    long metrics = settings.metricsInterval.toMillis();
    supervisor.scheduleWithFixedDelay(this::readLag, 0, metrics, TimeUnit.MILLISECONDS);
    supervisor.scheduleWithFixedDelay(this::closeWhenOnlyOursAreLeft, 1, 1, TimeUnit.SECONDS);
    LOG.info("CDC relay {} started on {}.converge_outbox (slot {})", settings.name, settings.schema, slot);
  }

  private Thread daemon(Runnable r, String name) {
    Thread t = new Thread(threads, r, name);
    t.setDaemon(true);
    return t;
  }

  /** Builds and runs a new engine on its own thread (Debezium's pools are created from it: same group). */
  private synchronized void launch() {
    if (closing) {
      return;
    }
    Thread t = daemon(() -> {
      DebeziumEngine<RecordChangeEvent<SourceRecord>> e = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
          .using(DebeziumProperties.of(settings, slot))
          .notifying(this)
          .using((success, message, error) -> stopped(message, error))
          .build();
      synchronized (engineLock) {
        if (closing) {
          return;
        }
        engine = e;
      }
      running = true;
      e.run();
    }, "converge-cdc-" + settings.name);
    engineThread = t;
    t.start();
  }

  /** The engine's completion callback: unless closing, it failed: restart it after a backoff. */
  private void stopped(String message, Throwable error) {
    running = false;
    if (closing) {
      return;
    }
    int n = failuresInARow.incrementAndGet();
    long delay = outage.delay(n).toMillis();
    restarts.incrementAndGet();
    lastFailure = message + (error == null ? "" : ": " + error);
    settings.metrics.cdcRestarted();
    LOG.error("CDC relay {}: engine stopped ({}); restart {} in {} ms", settings.name, lastFailure, restarts.get(), delay, error);
    ScheduledExecutorService s = supervisor;
    if (s != null && !s.isShutdown()) {
      s.schedule(this::launch, delay, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void handleBatch(List<RecordChangeEvent<SourceRecord>> records,
                          DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) throws InterruptedException {
    Set<String> keys = new LinkedHashSet<>();
    for (RecordChangeEvent<SourceRecord> event : records) {
      Object value = event.record().value();
      // heartbeats (no "op", or an insert into converge_cdc_heartbeat) carry no outbox row
      if (value instanceof Struct v && event.record().topic().endsWith(".converge_outbox") && v.schema().field("op") != null
          && "c".equals(v.getString("op"))) {
        keys.add(v.getStruct("after").getString("order_key"));
      }
    }
    synchronized (sending) {
      deliver(keys, true);
    }
    for (RecordChangeEvent<SourceRecord> event : records) {
      committer.markProcessed(event);
    }
    committer.markBatchFinished();
    failuresInARow.set(0);
  }

  /**
   * Sends the unpublished rows of {@code keys} until each is published or parked: refusals are retried
   * with the retry backoff (counted), outages of the broker or the database with the outage backoff (not
   * counted). The WAL offset of the batch is committed only after this returns. With {@code untilClosed}
   * false (resume) an outage ends it with {@link BrokerUnavailableException}.
   *
   * @return rows published
   */
  private int deliver(Collection<String> keys, boolean untilClosed) throws InterruptedException {
    int total = 0;
    int refusals = 0;
    int outages = 0;
    while (!keys.isEmpty()) {
      if (closing && untilClosed) {
        throw new InterruptedException("CDC relay " + settings.name + " is closing");
      }
      RelayCycle.Result r;
      try (Connection c = db.getConnection()) {
        r = stream.runKeys(c, keys);
      } catch (SQLException | RuntimeException e) {
        outages++;
        long delay = outage.delay(outages).toMillis();
        LOG.warn("CDC relay {}: cannot relay {} keys ({}); retrying in {} ms", settings.name, keys.size(), e.toString(), delay);
        Thread.sleep(delay);
        continue;
      }
      total += r.published();
      count(r);
      if (r.postponed() > 0) {
        outages = r.published() > 0 ? 1 : outages + 1;
        if (!untilClosed && r.published() == 0) {
          throw new BrokerUnavailableException("CDC relay " + settings.name + ": " + settings.sink.name()
              + " is unavailable; the resumed rows are sent by the sweeper later", null, null);
        }
        Thread.sleep(outage.delay(outages).toMillis());
      } else if (r.refused() > r.parked()) {
        refusals++;
        Thread.sleep(retry.delay(refusals).toMillis());
      } else if (!r.more()) {
        return total;
      }
    }
    return total;
  }

  private void count(RelayCycle.Result r) {
    if (r.published() > 0) {
      published.addAndGet(r.published());
      settings.metrics.published(r.published());
    }
    parked.addAndGet(r.parked());
  }

  /** Publishes rows no stream event brought, older than the sweep age, with the polling relay's claim. */
  private void sweep() {
    try {
      synchronized (sending) {
        try (Connection c = db.getConnection()) {
          while (!closing) {
            RelayCycle.Result r = sweeper.run(c);
            count(r);
            if (r.published() > 0) {
              LOG.info("CDC relay {}: the sweeper published {} rows the stream did not deliver", settings.name, r.published());
            }
            if (r.brokerUnavailable() || r.published() + r.refused() == 0) {
              break;
            }
          }
        }
      }
    } catch (SQLException | RuntimeException e) {
      LOG.warn("CDC relay {}: sweep failed: {}", settings.name, e.toString());
    }
  }

  private void readLag() {
    try {
      settings.metrics.cdcLag(slots.lag());
    } catch (SQLException | RuntimeException e) {
      LOG.debug("CDC relay {}: cannot read the slot lag: {}", settings.name, e.toString());
    }
  }

  /**
   * When {@code main} has returned (the launcher's DestroyJavaVM thread waits) and only this relay's
   * threads are left (Debezium's pools are not daemon threads), closes the relay so the JVM can exit.
   */
  private void closeWhenOnlyOursAreLeft() {
    ThreadGroup root = Thread.currentThread().getThreadGroup();
    while (root.getParent() != null) {
      root = root.getParent();
    }
    Thread[] all = new Thread[root.activeCount() + 16];
    int n = root.enumerate(all, true);
    boolean mainReturned = false;
    for (int i = 0; i < n; i++) {
      Thread t = all[i];
      if ("DestroyJavaVM".equals(t.getName())) {
        mainReturned = true;
      } else if (t.isAlive() && !t.isDaemon() && !inOurGroup(t)) {
        return;
      }
    }
    if (mainReturned) {
      LOG.info("CDC relay {}: the application's main thread has ended and the relay was not closed: closing it", settings.name);
      daemon(this::close, "converge-cdc-" + settings.name + "-close").start();
    }
  }

  private boolean inOurGroup(Thread t) {
    for (ThreadGroup g = t.getThreadGroup(); g != null; g = g.getParent()) {
      if (g == threads) {
        return true;
      }
    }
    return false;
  }

  @Override
  public int resume(String key) {
    Outbox.on(db).resume(key);
    try {
      synchronized (sending) {
        int n = deliver(List.of(key), false);
        LOG.info("CDC relay {}: resumed key {}: {} rows published", settings.name, key, n);
        return n;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConvergeException("CDC relay " + settings.name + " interrupted while resuming key " + key
          + "; the key is resumed, the sweeper sends what is left", e);
    }
  }

  @Override
  public Health health() {
    long lag;
    try {
      lag = slots.lag();
    } catch (SQLException | RuntimeException e) {
      lag = -1;
    }
    return new Health(running, restarts.get(), lastFailure, lag);
  }

  @Override
  public long published() {
    return published.get();
  }

  @Override
  public String slotName() {
    return slot;
  }

  @Override
  public long parked() {
    return parked.get();
  }

  @Override
  public synchronized void close() {
    if (supervisor == null) {
      return;
    }
    closing = true;
    supervisor.shutdownNow();
    DebeziumEngine<RecordChangeEvent<SourceRecord>> e;
    synchronized (engineLock) {
      e = engine;
      engine = null;
    }
    if (e != null) {
      try {
        e.close();
      } catch (Exception ex) {
        LOG.warn("CDC relay {}: closing the engine: {}", settings.name, ex.toString());
      }
    }
    Thread t = engineThread;
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
      }
    }
    engineThread = null;
    supervisor = null;
    running = false;
    LOG.info("CDC relay {} stopped (slot {} kept)", settings.name, slot);
  }

  @Override
  public synchronized void dropSlot() {
    close();
    try {
      slots.drop(settings.name);
    } catch (SQLException e) {
      throw new ConvergeException("CDC relay " + settings.name + " cannot drop slot " + slot + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConvergeException("Interrupted while dropping slot " + slot, e);
    }
    LOG.info("CDC relay {}: slot, publication and offsets dropped", settings.name);
  }
}
