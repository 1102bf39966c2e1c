package io.converge.outbox.cdc;

import io.converge.outbox.internal.Sleeper;
import io.converge.core.ConvergeException;
import java.sql.SQLException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link CdcRelay} on Debezium's embedded engine, in three parts: {@link CdcSlot} (tables, publication
 * and replication slot), {@link CdcEngine} (the engine's lifecycle, restarts and the supervisor) and
 * {@link CdcDelivery} (the stream, the sweeper and resume, through the shared delivery policy). The
 * supervisor also runs the sweeper, reads {@code cdc.lag} and closes the relay when only its threads keep
 * the JVM alive. Thread-safe.
 */
final class DebeziumCdcRelay implements CdcRelay {

  private static final Logger LOG = LoggerFactory.getLogger(DebeziumCdcRelay.class);

  private final CdcSettings settings;
  private final String slot;
  private final CdcSlot slots;
  private final CdcDelivery delivery;
  private final CdcEngine engine;
  private boolean started;

  DebeziumCdcRelay(CdcSettings settings) {
    this(settings, Sleeper.THREAD);
  }

  /** A relay whose backoffs pause with {@code sleeper}. */
  DebeziumCdcRelay(CdcSettings settings, Sleeper sleeper) {
    this.settings = settings;
    this.slot = "converge_cdc_" + settings.name();
    PGSimpleDataSource db = new PGSimpleDataSource();
    db.setUrl(settings.jdbcUrl());
    db.setUser(settings.user());
    db.setPassword(settings.password());
    db.setCurrentSchema(settings.schema());
    this.slots = new CdcSlot(db, slot, settings.schema(), sleeper);
    // the engine is created below and read only once it exists: a closing relay stops delivering
    this.delivery = new CdcDelivery(settings, db, () -> engine().closing(), sleeper);
    this.engine = new CdcEngine(settings, slot, delivery);
  }

  /** The settings this relay was built with. */
  CdcSettings settings() {
    return settings;
  }

  private CdcEngine engine() {
    return engine;
  }

  @Override
  public synchronized void start() {
    if (started) {
      return;
    }
    slots.prepare(); // before the engine: the stream starts here, rows committed before are the sweeper's
    ScheduledExecutorService supervisor = engine.start();
    started = true;
    long sweep = settings.sweepInterval().toMillis();
    supervisor.scheduleWithFixedDelay(delivery::sweep, sweep, sweep, TimeUnit.MILLISECONDS);
    supervisor.scheduleWithFixedDelay(this::readLag, 0, settings.metricsInterval().toMillis(), TimeUnit.MILLISECONDS);
    supervisor.scheduleWithFixedDelay(() -> engine.closeWhenOnlyOursAreLeft(this::close), 1, 1, TimeUnit.SECONDS);
    LOG.info("CDC relay {} started on {}.converge_outbox (slot {})", settings.name(), settings.schema(), slot);
  }

  private void readLag() {
    try {
      settings.metrics().cdcLag(slots.lag());
    } catch (SQLException | RuntimeException e) {
      LOG.debug("CDC relay {}: cannot read the slot lag: {}", settings.name(), e.toString());
    }
  }

  @Override
  public int resume(String tenant, String topic, String key) {
    return delivery.resume(tenant, topic, key);
  }

  @Override
  public Health health() {
    long lag;
    try {
      lag = slots.lag();
    } catch (SQLException | RuntimeException e) {
      lag = -1;
    }
    return new Health(engine.running(), engine.restarts(), engine.lastFailure(), lag);
  }

  @Override
  public long published() {
    return delivery.published();
  }

  @Override
  public String slotName() {
    return slot;
  }

  @Override
  public long parked() {
    return delivery.parked();
  }

  @Override
  public synchronized void close() {
    if (!started) {
      return;
    }
    engine.close();
    started = false;
    LOG.info("CDC relay {} stopped (slot {} kept)", settings.name(), slot);
  }

  @Override
  public synchronized void dropSlot() {
    close();
    try {
      slots.drop(settings.name());
    } catch (SQLException e) {
      throw new ConvergeException("CDC relay " + settings.name() + " cannot drop slot " + slot + ": " + e.getMessage(),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConvergeException("Interrupted while dropping slot " + slot, e);
    }
    LOG.info("CDC relay {}: slot, publication and offsets dropped", settings.name());
  }
}
