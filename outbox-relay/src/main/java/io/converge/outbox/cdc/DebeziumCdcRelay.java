package io.converge.outbox.cdc;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.SendAllResult;
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
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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

  private static final String MARK_PUBLISHED = "UPDATE converge_outbox SET published_at = now(), parked_at = NULL WHERE seq = ANY(?)";
  private static final String PARKED_KEYS =
      "SELECT DISTINCT order_key FROM converge_outbox WHERE published_at IS NULL AND parked_at IS NOT NULL";
  private static final String PARKED_ROWS = "SELECT seq, message_id, topic, msg_key, tag, header_names, header_values, payload "
      + "FROM converge_outbox WHERE order_key = ? AND published_at IS NULL AND parked_at IS NOT NULL ORDER BY seq";
  private static final String MARK_PARKED =
      "UPDATE converge_outbox SET parked_at = now(), attempts = ?, last_error = ? WHERE seq = ?";

  private final CdcRelay.Builder settings;
  private final PGSimpleDataSource db;
  private final String slot;
  /** The parked keys: loaded from the table at start ({@link #loadParkedKeys}), then kept by this relay. */
  private final Set<String> parkedKeys = ConcurrentHashMap.newKeySet();
  /** Serialises the engine's batches with {@link #resume}: a key's rows go out in seq order. */
  private final Object sending = new Object();
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
    loadParkedKeys();
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
    List<OutboxRecord> batch = new ArrayList<>();
    for (RecordChangeEvent<SourceRecord> event : records) {
      Object value = event.record().value();
      if (value instanceof Struct v && "c".equals(v.getString("op"))) {
        batch.add(toRecord(v.getStruct("after")));
      }
    }
    List<Long> sent = new ArrayList<>();
    Map<Long, String[]> parkedRows = new LinkedHashMap<>();
    synchronized (sending) {
      deliver(batch, sent, parkedRows);
      mark(sent, parkedRows);
    }
    for (RecordChangeEvent<SourceRecord> event : records) {
      committer.markProcessed(event);
    }
    committer.markBatchFinished();
  }

  /**
   * Loads the keys parked before this start: this relay, the slot's only reader, parks and resumes
   * every other one itself, so the set is read once per start, not per batch.
   */
  private void loadParkedKeys() {
    try (Connection c = db.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(PARKED_KEYS)) {
      parkedKeys.clear();
      while (rs.next()) {
        parkedKeys.add(rs.getString(1));
      }
    } catch (SQLException e) {
      throw new ConvergeException("CDC relay " + settings.name + " cannot read its parked keys: " + e.getMessage(), e);
    }
  }

  @Override
  public int resume(String key) {
    List<OutboxRecord> rows = new ArrayList<>();
    List<Long> sent = new ArrayList<>();
    Map<Long, String[]> parkedRows = new LinkedHashMap<>();
    synchronized (sending) {
      // the rows stay parked in the table until sent: a failed resume leaves them parked, to resume again
      try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(PARKED_ROWS)) {
        ps.setString(1, key);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            rows.add(new OutboxRecord(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
                headers((String[]) rs.getArray(6).getArray(), (String[]) rs.getArray(7).getArray()), rs.getBytes(8), 0));
          }
        }
      } catch (SQLException e) {
        throw new ConvergeException("CDC relay " + settings.name + " cannot resume key " + key + ": " + e.getMessage(), e);
      }
      parkedKeys.remove(key);
      if (rows.isEmpty()) {
        return 0;
      }
      try {
        deliver(rows, sent, parkedRows);
        mark(sent, parkedRows);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        parkedKeys.add(key);
        throw new ConvergeException("CDC relay " + settings.name + " closed while resuming key " + key
            + "; the rows not marked published stay parked: resume again", e);
      }
    }
    LOG.info("CDC relay {}: resumed key {}: {} rows published, {} parked again", settings.name, key, sent.size(), parkedRows.size());
    return sent.size();
  }

  private static Map<String, String> headers(String[] names, String[] values) {
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 0; i < names.length; i++) {
      headers.put(names[i], values[i]);
    }
    return headers;
  }

  /**
   * Sends {@code batch} through the sink's pipelined {@code sendAll} until every record is stored or
   * parked: records the broker refused are retried with backoff, and a key refused {@code maxAttempts}
   * times is parked with its later records; an unavailable broker is retried without counting. The
   * offset is committed only after this returns, so nothing of the batch is skipped.
   */
  private void deliver(List<OutboxRecord> batch, List<Long> sent, Map<Long, String[]> parkedRows) throws InterruptedException {
    Map<Long, Integer> refusals = new HashMap<>();
    List<OutboxRecord> pending = new ArrayList<>();
    for (OutboxRecord r : batch) {
      if (parkedKeys.contains(r.orderKey())) {
        parkedRows.put(r.seq(), new String[] {"0", "an earlier message of key " + r.orderKey() + " is parked"});
      } else {
        pending.add(r);
      }
    }
    long backoff = Math.max(1, settings.retryBase.toMillis());
    while (!pending.isEmpty()) {
      if (closing) {
        throw new InterruptedException("CDC relay " + settings.name + " is closing");
      }
      SendAllResult result = settings.sink.sendAll(pending);
      if (Thread.interrupted()) {
        throw new InterruptedException("CDC relay " + settings.name + " interrupted while sending");
      }
      Set<Long> done = new HashSet<>();
      for (OutboxRecord r : result.sent()) {
        sent.add(r.seq());
        done.add(r.seq());
      }
      for (SendAllResult.Failure f : result.failed()) {
        OutboxRecord r = f.record();
        if (f.error() instanceof BrokerUnavailableException) {
          LOG.warn("CDC relay {}: broker unavailable for {} ({}), retrying in {} ms", settings.name, r, f.error().getMessage(), backoff);
          continue;
        }
        int n = refusals.merge(r.seq(), 1, Integer::sum);
        if (n >= settings.maxAttempts) {
          LOG.error("CDC relay {}: {} refused {} times, parking key {}: {}", settings.name, r, n, r.orderKey(), f.error().toString());
          parkedKeys.add(r.orderKey());
          parkedRows.put(r.seq(), new String[] {Integer.toString(n), f.error().toString()});
          done.add(r.seq());
        } else {
          LOG.warn("CDC relay {}: {} refused (attempt {}/{}): {}", settings.name, r, n, settings.maxAttempts, f.error().toString());
        }
      }
      List<OutboxRecord> next = new ArrayList<>();
      for (OutboxRecord r : pending) {
        if (done.contains(r.seq())) {
          continue;
        }
        if (parkedKeys.contains(r.orderKey())) {
          parkedRows.put(r.seq(), new String[] {"0", "an earlier message of key " + r.orderKey() + " is parked"});
        } else {
          next.add(r);
        }
      }
      if (!next.isEmpty()) { // something failed (or was held behind a failure of its key): back off
        Thread.sleep(backoff);
        backoff = Math.min(backoff * 2, Math.max(1, settings.retryMax.toMillis()));
      }
      pending = next;
    }
  }

  /**
   * Marks sent rows published and refused ones parked, in one transaction, retrying while the database
   * is away: a parked row must be visible (and resumable) before the WAL offset moves past it. On close
   * it gives up with {@link InterruptedException}; the batch's offset is then not committed and the
   * batch is read again on restart (duplicates, carried by the message id; nothing skipped).
   */
  private void mark(List<Long> sent, Map<Long, String[]> parkedRows) throws InterruptedException {
    if (sent.isEmpty() && parkedRows.isEmpty()) {
      return;
    }
    long backoff = Math.max(1, settings.retryBase.toMillis());
    while (true) {
      try (Connection c = db.getConnection()) {
        c.setAutoCommit(false);
        if (!sent.isEmpty()) {
          try (PreparedStatement ps = c.prepareStatement(MARK_PUBLISHED)) {
            ps.setArray(1, c.createArrayOf("bigint", sent.toArray()));
            ps.executeUpdate();
          }
        }
        if (!parkedRows.isEmpty()) {
          try (PreparedStatement ps = c.prepareStatement(MARK_PARKED)) {
            for (Map.Entry<Long, String[]> e : parkedRows.entrySet()) {
              ps.setInt(1, Integer.parseInt(e.getValue()[0]));
              ps.setString(2, e.getValue()[1]);
              ps.setLong(3, e.getKey());
              ps.addBatch();
            }
            ps.executeBatch();
          }
        }
        c.commit();
        break;
      } catch (SQLException e) {
        LOG.warn("CDC relay {}: cannot mark {} rows published / {} parked ({}), retrying in {} ms", settings.name, sent.size(),
            parkedRows.size(), e.getMessage(), backoff);
        if (closing) {
          throw new InterruptedException("CDC relay " + settings.name + " is closing");
        }
        Thread.sleep(backoff);
        backoff = Math.min(backoff * 2, Math.max(1, settings.retryMax.toMillis()));
      }
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
