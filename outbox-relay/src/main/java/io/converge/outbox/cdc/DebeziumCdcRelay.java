package io.converge.outbox.cdc;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.ConvergeException;
import io.converge.producer.schema.Migrations;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.net.URI;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link CdcRelay} on Debezium's embedded engine. */
final class DebeziumCdcRelay implements CdcRelay, DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> {

  private static final Logger LOG = LoggerFactory.getLogger(DebeziumCdcRelay.class);

  private static final String MARK_PUBLISHED = "UPDATE converge_outbox SET published_at = now() WHERE seq = ANY(?)";
  private static final String MARK_PARKED =
      "UPDATE converge_outbox SET parked_at = now(), attempts = ?, last_error = ? WHERE seq = ?";

  private final CdcRelay.Builder settings;
  private final PGSimpleDataSource db;
  private final String slot;
  private final Set<String> parkedKeys = new HashSet<>();
  private final AtomicLong published = new AtomicLong();
  private final AtomicLong parked = new AtomicLong();
  private DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
  private ExecutorService runner;
  private volatile boolean closing;

  DebeziumCdcRelay(CdcRelay.Builder settings) {
    this.settings = settings;
    this.slot = "converge_cdc_" + settings.name;
    this.db = new PGSimpleDataSource();
    db.setUrl(settings.jdbcUrl);
    db.setUser(settings.user);
    db.setPassword(settings.password);
    db.setCurrentSchema(settings.schema);
  }

  @Override
  public synchronized void start() {
    if (engine != null) {
      return;
    }
    closing = false;
    Migrations.apply(db, "cdc");
    createPublication();
    URI u = URI.create(settings.jdbcUrl.substring("jdbc:".length()));
    Properties p = new Properties();
    p.setProperty("name", slot);
    p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    p.setProperty("offset.storage", JdbcOffsetStore.class.getName());
    p.setProperty("offset.flush.interval.ms", Long.toString(settings.offsetFlushInterval.toMillis()));
    p.setProperty(JdbcOffsetStore.URL, settings.jdbcUrl);
    p.setProperty(JdbcOffsetStore.USER, nullToEmpty(settings.user));
    p.setProperty(JdbcOffsetStore.PASSWORD, nullToEmpty(settings.password));
    p.setProperty(JdbcOffsetStore.SCHEMA, settings.schema);
    p.setProperty(JdbcOffsetStore.NAME, settings.name);
    p.setProperty("database.hostname", u.getHost());
    p.setProperty("database.port", Integer.toString(u.getPort() > 0 ? u.getPort() : 5432));
    p.setProperty("database.dbname", u.getPath().replaceFirst("^/", ""));
    p.setProperty("database.user", nullToEmpty(settings.user));
    p.setProperty("database.password", nullToEmpty(settings.password));
    p.setProperty("topic.prefix", slot);
    p.setProperty("plugin.name", "pgoutput");
    p.setProperty("slot.name", slot);
    p.setProperty("slot.drop.on.stop", "false");
    p.setProperty("publication.name", slot);
    p.setProperty("publication.autocreate.mode", "disabled");
    p.setProperty("table.include.list", settings.schema + ".converge_outbox");
    p.setProperty("snapshot.mode", "no_data");
    p.setProperty("binary.handling.mode", "bytes");
    p.setProperty("tombstones.on.delete", "false");
    p.setProperty("record.processing.threads", "1");
    p.setProperty("record.processing.order", "ORDERED");
    engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
        .using(p)
        .notifying(this)
        .using((success, message, error) -> {
          if (!success && !closing) {
            LOG.error("CDC relay {} stopped: {}", settings.name, message, error);
          }
        })
        .build();
    runner = Executors.newSingleThreadExecutor(r -> new Thread(r, "converge-cdc-" + settings.name));
    runner.execute(engine);
    LOG.info("CDC relay {} started on {}.converge_outbox (slot {})", settings.name, settings.schema, slot);
  }

  private void createPublication() {
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT 1 FROM pg_publication WHERE pubname = '" + slot + "'")) {
        if (rs.next()) {
          return;
        }
      }
      // inserts only: marking rows published must not come back as events
      s.execute("CREATE PUBLICATION " + slot + " FOR TABLE " + settings.schema + ".converge_outbox WITH (publish = 'insert')");
    } catch (SQLException e) {
      throw new ConvergeException("CDC relay " + settings.name + " cannot create publication " + slot + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void handleBatch(List<RecordChangeEvent<SourceRecord>> records,
                          DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) throws InterruptedException {
    List<Long> sent = new ArrayList<>();
    Map<Long, String[]> parkedRows = new LinkedHashMap<>();
    for (RecordChangeEvent<SourceRecord> event : records) {
      Object value = event.record().value();
      if (value instanceof Struct v && "c".equals(v.getString("op"))) {
        Struct after = v.getStruct("after");
        OutboxRecord r = toRecord(after);
        String orderKey = after.getString("order_key");
        if (parkedKeys.contains(orderKey)) {
          parkedRows.put(r.seq(), new String[] {"0", "an earlier message of key " + orderKey + " is parked"});
        } else {
          String refusal = deliver(r);
          if (refusal == null) {
            sent.add(r.seq());
          } else {
            parkedKeys.add(orderKey);
            parkedRows.put(r.seq(), new String[] {Integer.toString(settings.maxAttempts), refusal});
          }
        }
      }
      committer.markProcessed(event);
    }
    mark(sent, parkedRows);
    committer.markBatchFinished();
  }

  /** Sends with retries; null when sent, else the last refusal after {@code maxAttempts} refusals. */
  private String deliver(OutboxRecord r) throws InterruptedException {
    int refusals = 0;
    long backoff = Math.max(1, settings.retryBase.toMillis());
    while (true) {
      if (closing) {
        throw new InterruptedException("CDC relay " + settings.name + " is closing");
      }
      try {
        settings.sink.send(r);
        return null;
      } catch (BrokerUnavailableException e) {
        LOG.warn("CDC relay {}: broker unavailable for {} ({}), retrying in {} ms", settings.name, r, e.getMessage(), backoff);
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        refusals++;
        if (refusals >= settings.maxAttempts) {
          LOG.error("CDC relay {}: {} refused {} times, parking key {}: {}", settings.name, r, refusals, r.key(), e.toString());
          return e.toString();
        }
        LOG.warn("CDC relay {}: {} refused (attempt {}/{}): {}", settings.name, r, refusals, settings.maxAttempts, e.toString());
      }
      Thread.sleep(backoff);
      backoff = Math.min(backoff * 2, Math.max(1, settings.retryMax.toMillis()));
    }
  }

  private void mark(List<Long> sent, Map<Long, String[]> parkedRows) {
    if (sent.isEmpty() && parkedRows.isEmpty()) {
      return;
    }
    // informational (lag metrics, purge); the WAL offset, not this flag, decides what is replayed
    try (Connection c = db.getConnection()) {
      if (!sent.isEmpty()) {
        try (PreparedStatement ps = c.prepareStatement(MARK_PUBLISHED)) {
          ps.setArray(1, c.createArrayOf("bigint", sent.toArray()));
          ps.executeUpdate();
        }
      }
      for (Map.Entry<Long, String[]> e : parkedRows.entrySet()) {
        try (PreparedStatement ps = c.prepareStatement(MARK_PARKED)) {
          ps.setInt(1, Integer.parseInt(e.getValue()[0]));
          ps.setString(2, e.getValue()[1]);
          ps.setLong(3, e.getKey());
          ps.executeUpdate();
        }
      }
    } catch (SQLException e) {
      LOG.warn("CDC relay {}: could not mark {} rows published / {} parked: {}", settings.name, sent.size(), parkedRows.size(),
          e.getMessage());
    }
    published.addAndGet(sent.size());
    parked.addAndGet(parkedRows.size());
  }

  private static OutboxRecord toRecord(Struct after) {
    List<?> names = after.getArray("header_names");
    List<?> values = after.getArray("header_values");
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 0; i < names.size(); i++) {
      headers.put(String.valueOf(names.get(i)), String.valueOf(values.get(i)));
    }
    return new OutboxRecord(after.getInt64("seq"), after.getString("message_id"), after.getString("topic"),
        after.getString("msg_key"), after.getString("tag"), headers, bytes(after.get("payload")), 0);
  }

  private static byte[] bytes(Object o) {
    if (o instanceof byte[] b) {
      return b;
    }
    ByteBuffer b = ((ByteBuffer) o).duplicate();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
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
    if (engine == null) {
      return;
    }
    closing = true;
    try {
      engine.close();
    } catch (Exception e) {
      LOG.warn("CDC relay {}: closing the engine: {}", settings.name, e.toString());
    }
    runner.shutdown();
    try {
      if (!runner.awaitTermination(30, TimeUnit.SECONDS)) {
        runner.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    engine = null;
    LOG.info("CDC relay {} stopped (slot {} kept)", settings.name, slot);
  }

  @Override
  public synchronized void dropSlot() {
    close();
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      for (int attempt = 0; ; attempt++) {
        try {
          s.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
          break;
        } catch (SQLException e) {
          if (attempt >= 20) {
            throw e;
          }
          Thread.sleep(250); // the walsender of the closed engine may still be exiting
        }
      }
      s.execute("DROP PUBLICATION IF EXISTS " + slot);
      try (PreparedStatement ps = c.prepareStatement("DELETE FROM converge_cdc_offset WHERE relay_name = ?")) {
        ps.setString(1, settings.name);
        ps.executeUpdate();
      }
    } catch (SQLException e) {
      throw new ConvergeException("CDC relay " + settings.name + " cannot drop slot " + slot + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConvergeException("Interrupted while dropping slot " + slot, e);
    }
    LOG.info("CDC relay {}: slot, publication and offsets dropped", settings.name);
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
