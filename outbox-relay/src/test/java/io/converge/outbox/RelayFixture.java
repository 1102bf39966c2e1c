package io.converge.outbox;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** Test support for the relay ITs: a fresh outbox schema, producers, relays on the embedded RocketMQ. */
public final class RelayFixture {

  private RelayFixture() {
  }

  /** A new schema with the producer and outbox migrations. */
  public static DataSource newOutbox() {
    DataSource ds = ConvergePostgres.shared().newSchema("outbox");
    Migrations.apply(ds, "producer");
    Migrations.apply(ds, "outbox");
    return ds;
  }

  public static TxnProducer producer(DataSource ds) {
    return TxnProducer.builder().group("g-" + UUID.randomUUID().toString().substring(0, 8)).dataSource(ds)
        .backend(OutboxBackend.outbox()).build();
  }

  /** Commits one message of {@code key} (and returns its id). */
  public static String publish(TxnProducer p, String topic, String key, byte[] payload) {
    return p.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).key(key).payload(payload).build()));
  }

  public static String publish(TxnProducer p, String topic, String key) {
    return publish(p, topic, key, key.getBytes(UTF_8));
  }

  public static RocketMQSink.Builder sink(EmbeddedRocketMQ mq) {
    return RocketMQSink.nameServer(mq.nameServerAddress())
        .group("relay-" + UUID.randomUUID().toString().substring(0, 8))
        .sendTimeout(Duration.ofSeconds(1));
  }

  public static OutboxRelayBuilder relay(DataSource ds, OutboxSink sink) {
    return OutboxRelay.builder().dataSource(ds).sink(sink).brokerBackoff(Duration.ofMillis(100), Duration.ofSeconds(2));
  }

  public static long count(DataSource ds, String where) throws Exception {
    return scalar(ds, "SELECT count(*) FROM converge_outbox WHERE " + where);
  }

  /** The first column of the first row of {@code sql}, as a long. */
  public static long scalar(DataSource ds, String sql) throws Exception {
    return Long.parseLong(string(ds, sql));
  }

  /** The first column of the first row of {@code sql}, as text (null when there is no row). */
  public static String string(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  public static void execute(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /** Commits message {@code n} of {@code key} and returns its id. */
  @FunctionalInterface
  public interface KeyedPublish {

    String publish(String key, int n) throws Exception;
  }

  /**
   * Commits {@code perKey} messages for each of {@code keys} keys ({@code key-0}...) from {@code writers} threads at
   * once, each key from one writer (so its commit order is known); returns the committed ids per key, in commit
   * order. Fails with the first writer's failure.
   */
  public static Map<String, List<String>> writeConcurrently(int writers, int keys, int perKey, KeyedPublish publish)
      throws Exception {
    Map<String, List<String>> committed = Collections.synchronizedMap(new HashMap<>());
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        int writer = w;
        done.add(pool.submit(() -> {
          for (int n = 0; n < perKey; n++) {
            for (int k = writer; k < keys; k += writers) {
              String key = "key-" + k;
              String id = publish.publish(key, n);
              committed.computeIfAbsent(key, x -> Collections.synchronizedList(new ArrayList<>())).add(id);
            }
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
    return committed;
  }

  /** A sink that counts the sends it is asked for (successful or not) and passes them on. */
  static final class CountingSink implements OutboxSink {

    final OutboxSink delegate;
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger failures = new AtomicInteger();

    CountingSink(OutboxSink delegate) {
      this.delegate = delegate;
    }

    @Override
    public String name() {
      return delegate.name();
    }

    @Override
    public void send(OutboxRecord record) throws Exception {
      calls.incrementAndGet();
      try {
        delegate.send(record);
      } catch (Exception e) {
        failures.incrementAndGet();
        throw e;
      }
    }

    @Override
    public void close() {
      delegate.close();
    }
  }
}
