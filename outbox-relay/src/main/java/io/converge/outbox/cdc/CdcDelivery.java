package io.converge.outbox.cdc;

import io.converge.outbox.DeliverySettings;
import io.converge.outbox.Outbox;
import io.converge.outbox.internal.DeliveryPolicy;
import io.converge.outbox.internal.OutboxRows;
import io.converge.outbox.internal.RelayCycle;
import io.converge.outbox.internal.Sleeper;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CDC relay's delivery: the stream (the keys of each WAL batch, {@link #handleBatch}), the sweeper
 * ({@link #sweep}) and {@link #resume} all publish through the polling relay's {@link RelayCycle} and
 * {@link DeliveryPolicy} (per-key head-of-line claim, conditional mark, refusals counted and parked, outages
 * postponed), one at a time ({@link #sending}). The WAL offset of a batch is committed only after its rows
 * are published or parked. Pauses come from an injected {@link Sleeper}. Thread-safe.
 */
final class CdcDelivery implements DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> {

  private static final Logger LOG = LoggerFactory.getLogger(CdcDelivery.class);

  private final CdcSettings settings;
  private final DataSource db;
  private final DeliveryPolicy policy;
  private final RelayCycle stream;
  private final RelayCycle sweeper;
  private final BooleanSupplier closing;
  private final Sleeper sleeper;
  private final Object sending = new Object();
  private final AtomicLong published = new AtomicLong();
  private final AtomicLong parked = new AtomicLong();

  /** Delivery of the rows of {@code db}; stream deliveries give up when {@code closing} says so. */
  CdcDelivery(CdcSettings settings, DataSource db, BooleanSupplier closing, Sleeper sleeper) {
    this.settings = settings;
    this.db = db;
    DeliverySettings d = settings.delivery();
    this.policy = DeliveryPolicy.of(new OutboxRows(), d.maxAttempts(), d.retryBase(), d.retryMax(),
        d.brokerBackoffBase(), d.brokerBackoffMax(), settings.metrics());
    this.stream = new RelayCycle(settings.sink(), 1000, policy, Duration.ZERO);
    this.sweeper = new RelayCycle(settings.sink(), 1000, policy, settings.sweepAge());
    this.closing = closing;
    this.sleeper = sleeper;
  }

  @Override
  public void handleBatch(List<RecordChangeEvent<SourceRecord>> records,
      DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) throws InterruptedException {
    Set<String> keys = new LinkedHashSet<>();
    for (RecordChangeEvent<SourceRecord> event : records) {
      Object value = event.record().value();
      // heartbeats (no "op", or an insert into converge_cdc_heartbeat) carry no outbox row
      if (value instanceof Struct v && event.record().topic().endsWith(".converge_outbox")
          && v.schema().field("op") != null
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
  }

  /**
   * Sends the unpublished rows of {@code keys} until each is published or parked: refusals are retried
   * after the policy's retry delay (counted), outages of the broker or the database after its outage delay
   * (not counted). With {@code untilClosed} false (resume) an outage ends it with
   * {@link BrokerUnavailableException}.
   *
   * @return rows published
   */
  private int deliver(Collection<String> keys, boolean untilClosed) throws InterruptedException {
    int total = 0;
    int refusals = 0;
    int outages = 0;
    while (!keys.isEmpty()) {
      if (closing.getAsBoolean() && untilClosed) {
        throw new InterruptedException("CDC relay " + settings.name() + " is closing");
      }
      RelayCycle.Result r;
      try (Connection c = db.getConnection()) {
        r = stream.runKeys(c, keys);
      } catch (SQLException | RuntimeException e) {
        outages++;
        Duration delay = policy.outageDelay(outages);
        LOG.warn("CDC relay {}: cannot relay {} keys ({}); retrying in {}", settings.name(), keys.size(), e.toString(),
            delay);
        sleeper.sleep(delay);
        continue;
      }
      total += r.published();
      count(r);
      if (r.postponed() > 0) {
        outages = r.published() > 0 ? 1 : outages + 1;
        if (!untilClosed && r.published() == 0) {
          throw new BrokerUnavailableException("CDC relay " + settings.name() + ": " + settings.sink().name()
              + " is unavailable; the resumed rows are sent by the sweeper later", null, null);
        }
        sleeper.sleep(policy.outageDelay(outages));
      } else if (r.refused() > r.parked()) {
        refusals++;
        sleeper.sleep(policy.retryDelay(refusals));
      } else if (!r.more()) {
        return total;
      }
    }
    return total;
  }

  private void count(RelayCycle.Result r) {
    if (r.published() > 0) {
      published.addAndGet(r.published());
      settings.metrics().published(r.published());
    }
    parked.addAndGet(r.parked());
  }

  /** Publishes rows no stream event brought, older than the sweep age, with the polling relay's claim. */
  void sweep() {
    try {
      synchronized (sending) {
        try (Connection c = db.getConnection()) {
          while (!closing.getAsBoolean()) {
            RelayCycle.Result r = sweeper.run(c);
            count(r);
            if (r.published() > 0) {
              LOG.info("CDC relay {}: the sweeper published {} rows the stream did not deliver", settings.name(),
                  r.published());
            }
            if (r.brokerUnavailable() || r.published() + r.refused() == 0) {
              break;
            }
          }
        }
      }
    } catch (SQLException | RuntimeException e) {
      LOG.warn("CDC relay {}: sweep failed: {}", settings.name(), e.toString());
    }
  }

  /** See {@link CdcRelay#resume}. */
  int resume(String tenant, String topic, String key) {
    Outbox.on(db).resume(tenant, topic, key);
    try {
      synchronized (sending) {
        int n = deliver(List.of(key), false);
        LOG.info("CDC relay {}: resumed key {}: {} rows published", settings.name(), key, n);
        return n;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConvergeException("CDC relay " + settings.name() + " interrupted while resuming key " + key
          + "; the key is resumed, the sweeper sends what is left", e);
    }
  }

  /** Rows published since this relay was built. */
  long published() {
    return published.get();
  }

  /** Rows parked since this relay was built. */
  long parked() {
    return parked.get();
  }
}
