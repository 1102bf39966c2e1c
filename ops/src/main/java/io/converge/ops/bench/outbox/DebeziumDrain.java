package io.converge.ops.bench.outbox;

import io.converge.core.Envelope;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.db.FirstValue;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.selector.SelectMessageQueueByHash;
import org.apache.rocketmq.common.message.Message;

/**
 * The peer {@code debezium-outbox-drain}: what a team writes with Debezium instead of Converge's relay, over the same
 * outbox rows. Debezium's embedded engine on the table's WAL with its outbox event router ({@code EventRouter}, as
 * its documentation configures it, mapped onto the table's columns: the message id as the event id, the order key
 * as the event key, routed by the {@code topic} column), offsets in a file, and the glue a careful team writes: each
 * batch sent to RocketMQ asynchronously with the key's queue (RocketMQ's own hash selector, for order per key), all
 * sends of the batch awaited before its records are marked processed. The engine is stopped while the rows are
 * filled, then timed from its first sent record to its last, as {@code cdc-drain}. It never marks rows published
 * (Debezium does not write to the outbox): the rows still to send are counted by the glue. Not thread-safe; used by
 * {@link DrainScenario}.
 */
final class DebeziumDrain implements AutoCloseable {

  private static final Duration STALL = Duration.ofSeconds(60);

  private final Properties config;
  private final DataSource pool;
  private final DefaultMQProducer producer;
  private final Path offsets;
  private final AtomicLong sent = new AtomicLong();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private volatile long firstSentNanos;
  private volatile long firstBatch;
  private volatile boolean taskStarted;
  private long filled;

  private DebeziumDrain(Properties config, DataSource pool, DefaultMQProducer producer, Path offsets) {
    this.config = config;
    this.pool = pool;
    this.producer = producer;
    this.offsets = offsets;
  }

  /** The engine's slot and publication created (rows inserted from now on are in its stream), the engine stopped. */
  static DebeziumDrain prepare(BenchEnv env, DataSource pool, DefaultMQProducer producer) throws Exception {
    String schema = FirstValue.of(pool, "SELECT current_schema()", rs -> rs.getString(1));
    String name = "bench_dbz_" + Long.toHexString(System.nanoTime());
    Path offsets = Files.createTempFile("converge-bench-debezium", ".offsets");
    java.net.URI url = java.net.URI.create(env.platform().postgres().jdbcUrl().substring("jdbc:".length()));
    Properties p = new Properties();
    p.setProperty("name", name);
    p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    p.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
    p.setProperty("offset.storage.file.filename", offsets.toString());
    p.setProperty("offset.flush.interval.ms", "1000");
    p.setProperty("database.hostname", url.getHost());
    p.setProperty("database.port", Integer.toString(url.getPort()));
    p.setProperty("database.dbname", url.getPath().substring(1));
    p.setProperty("database.user", env.platform().postgres().user());
    p.setProperty("database.password", String.valueOf(env.platform().postgres().password()));
    p.setProperty("topic.prefix", name);
    p.setProperty("plugin.name", "pgoutput");
    p.setProperty("slot.name", name);
    p.setProperty("publication.name", name);
    // created here, as the table needs: converge_outbox is partitioned by day (outbox migration V5), and its rows
    // come under its own name only with publish_via_partition_root, which Debezium's own CREATE PUBLICATION omits
    p.setProperty("publication.autocreate.mode", "disabled");
    try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE PUBLICATION " + name + " FOR TABLE " + schema + ".converge_outbox"
          + " WITH (publish_via_partition_root = true)");
    }
    p.setProperty("table.include.list", schema + ".converge_outbox");
    p.setProperty("snapshot.mode", "no_data");
    p.setProperty("binary.handling.mode", "bytes");
    p.setProperty("tombstones.on.delete", "false");
    p.setProperty("transforms", "outbox");
    p.setProperty("transforms.outbox.type", "io.debezium.transforms.outbox.EventRouter");
    p.setProperty("transforms.outbox.table.field.event.id", "message_id");
    p.setProperty("transforms.outbox.table.field.event.key", "order_key");
    p.setProperty("transforms.outbox.table.field.event.payload", "payload");
    p.setProperty("transforms.outbox.route.by.field", "topic");
    p.setProperty("transforms.outbox.route.topic.replacement", "${routedByValue}");
    p.setProperty("transforms.outbox.table.fields.additional.placement", "message_id:header:" + Envelope.MESSAGE_ID);
    DebeziumDrain drain = new DebeziumDrain(p, pool, producer, offsets);
    drain.runUntil(() -> slotActive(pool, name), "open its replication slot " + name);
    return drain;
  }

  private static boolean slotActive(DataSource pool, String slot) throws SQLException {
    Boolean active = FirstValue.of(pool,
        "SELECT bool_or(active) FROM pg_replication_slots WHERE slot_name = '" + slot + "'", rs -> rs.getBoolean(1));
    return Boolean.TRUE.equals(active);
  }

  /** A condition polled while the engine runs. */
  @FunctionalInterface
  private interface Condition {

    boolean holds() throws Exception;
  }

  /** Runs the engine until {@code done} holds (or fails after {@link #STALL} without progress), then stops it. */
  private void runUntil(Condition done, String what) throws Exception {
    ExecutorService runner = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "bench-debezium");
      t.setDaemon(true);
      return t;
    });
    try (DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = DebeziumEngine
        .create(ChangeEventFormat.of(Connect.class))
        .using(config)
        .notifying(this::sendBatch)
        .using((success, message, error) -> {
          if (!success) {
            failure.compareAndSet(null, error != null ? error : new IllegalStateException(message));
          }
        })
        .using(new DebeziumEngine.ConnectorCallback() {

          @Override
          public void taskStarted() {
            taskStarted = true;
          }
        })
        .build()) {
      taskStarted = false;
      runner.execute(engine);
      long deadline = System.nanoTime() + STALL.toNanos();
      long progress = sent.get();
      while (!(taskStarted && done.holds())) { // an engine closed while its task starts refuses to stop
        if (failure.get() != null) {
          throw new IllegalStateException("debezium-outbox-drain: the engine stopped", failure.get());
        }
        if (sent.get() != progress) {
          progress = sent.get();
          deadline = System.nanoTime() + STALL.toNanos();
        } else if (System.nanoTime() > deadline) {
          throw new IllegalStateException("debezium-outbox-drain: did not " + what + " within " + STALL.toSeconds()
              + " s (" + sent.get() + " of " + filled + " rows sent)");
        }
        Thread.sleep(5);
      }
    } finally {
      runner.shutdown();
      runner.awaitTermination(30, TimeUnit.SECONDS);
    }
  }

  /** The glue: the batch sent asynchronously, every send awaited, then its records marked processed. */
  private void sendBatch(List<RecordChangeEvent<SourceRecord>> records,
      DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) throws InterruptedException {
    CountDownLatch acked = new CountDownLatch(records.size());
    AtomicReference<Throwable> refused = new AtomicReference<>();
    for (RecordChangeEvent<SourceRecord> event : records) {
      SourceRecord r = event.record();
      Message m = new Message(r.topic(), bytes(r.value()));
      String key = String.valueOf(r.key());
      m.setKeys(key);
      Header id = r.headers().lastWithName(Envelope.MESSAGE_ID);
      if (id != null) {
        m.putUserProperty(Envelope.MESSAGE_ID, String.valueOf(id.value()));
      }
      try {
        producer.send(m, new SelectMessageQueueByHash(), key, new SendCallback() {

          @Override
          public void onSuccess(SendResult result) {
            if (result.getSendStatus() != SendStatus.SEND_OK) {
              refused.compareAndSet(null, new IllegalStateException("send status " + result.getSendStatus()));
            }
            acked.countDown();
          }

          @Override
          public void onException(Throwable e) {
            refused.compareAndSet(null, e);
            acked.countDown();
          }
        });
      } catch (Exception e) {
        refused.compareAndSet(null, e);
        acked.countDown();
      }
    }
    acked.await();
    if (refused.get() != null) {
      throw new IllegalStateException("a send of the batch failed: the engine stops, its offsets not advanced",
          refused.get());
    }
    for (RecordChangeEvent<SourceRecord> event : records) {
      committer.markProcessed(event);
    }
    committer.markBatchFinished();
    if (sent.get() == 0) {
      firstSentNanos = System.nanoTime();
      firstBatch = records.size();
    }
    sent.addAndGet(records.size());
  }

  private static byte[] bytes(Object payload) {
    if (payload instanceof java.nio.ByteBuffer b) {
      byte[] copy = new byte[b.remaining()];
      b.duplicate().get(copy);
      return copy;
    }
    return (byte[]) payload;
  }

  /** {@code rows} rows were just written: they are the rows still to send. */
  void filled(long rows) {
    filled = rows;
    sent.set(0);
    firstBatch = 0;
  }

  /** The rows filled that the glue has not sent yet. */
  long unsent() {
    return filled - sent.get();
  }

  /** Starts the engine on the filled rows and times it from its first sent batch to the last; rows per second. */
  double drain(int rows) throws Exception {
    long started = System.nanoTime();
    runUntil(() -> sent.get() >= rows, "send the " + rows + " filled rows");
    long ended = System.nanoTime();
    if (firstBatch >= rows) { // all in the first batch: only the time since start is there to count
      return rows / ((ended - started) / 1e9);
    }
    return (rows - firstBatch) / ((ended - firstSentNanos) / 1e9);
  }

  /** Drops the engine's slot (else it holds the WAL for the rest of the bench) and publication, and its offsets. */
  @Override
  public void close() throws IOException, SQLException {
    String name = config.getProperty("slot.name");
    try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
      s.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + name
          + "'");
      s.execute("DROP PUBLICATION IF EXISTS " + name);
    } finally {
      Files.deleteIfExists(offsets);
    }
  }
}
