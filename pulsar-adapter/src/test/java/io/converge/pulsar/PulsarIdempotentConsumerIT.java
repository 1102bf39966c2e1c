package io.converge.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import io.converge.producer.Envelope;
import io.converge.producer.schema.Migrations;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The Pulsar binding on the embedded Pulsar and PostgreSQL: real redeliveries, real duplicates. */
@ExtendWith({PulsarExtension.class, PostgresExtension.class})
class PulsarIdempotentConsumerIT {

  private static PulsarClient client;
  private static EmbeddedPulsar pulsar;
  private static DataSource db;

  @BeforeAll
  static void setUp(EmbeddedPulsar server, DataSource ds) throws Exception {
    pulsar = server;
    db = ds;
    Migrations.apply(ds, "consumer");
    try (Connection c = ds.getConnection()) {
      c.createStatement().execute("CREATE TABLE effect (message_id text, topic_key text, seq int)");
    }
    client = PulsarClient.builder().serviceUrl(server.serviceUrl()).build();
  }

  @AfterAll
  static void tearDown() throws Exception {
    client.close();
  }

  /** The handler's business write: one row per run, on the dedup transaction's connection. */
  private static final MessageHandler RECORD = (c, m) -> {
    try (
        PreparedStatement ps = c.prepareStatement("INSERT INTO effect (message_id, topic_key, seq) VALUES (?, ?, ?)")) {
      ps.setString(1, m.envelopeMessageId());
      ps.setString(2, m.brokerKey());
      ps.setInt(3, Integer.parseInt(m.payloadAsString()));
      ps.executeUpdate();
    }
  };

  @Test
  void sameMessageIdPublishedManyTimesConcurrentlyTakesEffectOnce() throws Exception {
    String topic = PulsarExtension.uniqueTopic("dup");
    String id = UUID.randomUUID().toString();
    String other = UUID.randomUUID().toString();
    try (PulsarIdempotentConsumer consumer = PulsarIdempotentConsumer.builder().client(client).topic(topic)
        .handler(handler("dup-" + UUID.randomUUID(), RECORD, db)).consumers(4).start();
        Producer<byte[]> producer = client.newProducer().topic(topic).create()) {
      ExecutorService senders = Executors.newFixedThreadPool(10);
      for (int i = 0; i < 20; i++) {
        // different keys: the copies go to different consumers and race on the claim
        String key = "k" + i;
        senders.submit(() -> send(producer, id, key, 1));
      }
      senders.shutdown();
      send(producer, other, "k", 2);
      await().atMost(Duration.ofSeconds(30)).until(() -> count("message_id = '" + other + "'") == 1);
      await("one effect of the copies").during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(30))
          .until(() -> count("message_id = '" + id + "'") == 1);
      assertThat(count("message_id = '" + id + "'")).isEqualTo(1);
      assertThat(consumer.subscription()).startsWith("dup-");
    }
  }

  @Test
  void aDeliveryHandledButNotAckedIsRedeliveredByPulsarAndTakesEffectOnce() throws Exception {
    String topic = PulsarExtension.uniqueTopic("unacked");
    IdempotentHandler real = handler("unacked-" + UUID.randomUUID(), RECORD, db);
    List<String> outcomes = new CopyOnWriteArrayList<>();
    List<Integer> deliveries = new CopyOnWriteArrayList<>();
    // the first delivery commits its effect, then the ack is lost (the listener sees a failure and nacks)
    IdempotentHandler losesFirstAck = new IdempotentHandler() {

      @Override
      public io.converge.consumer.Outcome handle(IncomingMessage m) {
        io.converge.consumer.Outcome o = real.handle(m);
        outcomes.add(o.name());
        deliveries.add(m.deliveryCount());
        if (outcomes.size() == 1) {
          throw new IllegalStateException("test: the ack of " + m.envelopeMessageId() + " is lost");
        }
        return o;
      }

      @Override
      public String group() {
        return real.group();
      }

      @Override
      public io.converge.consumer.Outcome resume(long dlqId) {
        return real.resume(dlqId);
      }
    };
    String id = UUID.randomUUID().toString();
    try (PulsarIdempotentConsumer consumer = PulsarIdempotentConsumer.builder().client(client).topic(topic)
        .handler(losesFirstAck).redeliveryDelay(Duration.ofMillis(200)).consumers(1).start();
        Producer<byte[]> producer = client.newProducer().topic(topic).create()) {
      send(producer, id, "k", 1);
      await().atMost(Duration.ofSeconds(30)).until(() -> outcomes.size() >= 2);
      await("acked now: nothing more comes").during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
          .until(() -> outcomes.size() == 2);
      assertThat(outcomes).containsExactly("PROCESSED", "DUPLICATE");
      assertThat(deliveries).containsExactly(1, 2);
      assertThat(count("message_id = '" + id + "'")).isEqualTo(1);
    }
  }

  @Test
  void theTenantComesFromTheEnvelope() throws Exception {
    String topic = PulsarExtension.uniqueTopic("tenant");
    String id = UUID.randomUUID().toString();
    String marker = UUID.randomUUID().toString();
    try (PulsarIdempotentConsumer consumer = PulsarIdempotentConsumer.builder().client(client).topic(topic)
        .handler(handler("tenant-" + UUID.randomUUID(), RECORD, db)).consumers(1).start();
        Producer<byte[]> producer = client.newProducer().topic(topic).create()) {
      for (String tenant : List.of("acme", "globex", "acme")) {
        producer.newMessage().key("k").properties(Map.of(Envelope.MESSAGE_ID, id, Envelope.TENANT, tenant))
            .value("1".getBytes(StandardCharsets.UTF_8)).send();
      }
      send(producer, marker, "k", 2);
      await().atMost(Duration.ofSeconds(30)).until(() -> count("message_id = '" + marker + "'") == 1);
      // one id, two tenants: two messages; the second copy of acme's is a duplicate
      assertThat(count("message_id = '" + id + "'")).isEqualTo(2);
    }
  }

  @Test
  void databaseDownIsWaitedOutWithoutARedeliveryOrAnAttempt() throws Exception {
    String topic = PulsarExtension.uniqueTopic("nack");
    AtomicInteger failuresLeft = new AtomicInteger(2); // the claim's transaction and the failure record
    DataSource flaky = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[]{DataSource.class},
        (proxy, method, args) -> {
          if (method.getName().equals("getConnection") && failuresLeft.getAndDecrement() > 0) {
            throw new SQLException("connection refused (test: database down)", "08001");
          }
          return method.invoke(db, args);
        });
    List<Integer> deliveryCounts = new CopyOnWriteArrayList<>();
    MessageHandler counting = (c, m) -> {
      deliveryCounts.add(m.deliveryCount());
      RECORD.handle(c, m);
    };
    String id = UUID.randomUUID().toString();
    try (PulsarIdempotentConsumer consumer = PulsarIdempotentConsumer.builder().client(client).topic(topic)
        .handler(IdempotentHandler.builder().group("nack-" + UUID.randomUUID()).dataSource(flaky).handler(counting)
            .policy(FailurePolicy.defaults().withMaxAttempts(1)).build())
        .redeliveryDelay(Duration.ofMillis(200)).consumers(1).start();
        Producer<byte[]> producer = client.newProducer().topic(topic).create()) {
      send(producer, id, "k", 1);
      await().atMost(Duration.ofSeconds(30)).until(() -> count("message_id = '" + id + "'") == 1);
      assertThat(failuresLeft.get()).isNegative();
      // an outage is waited out in the same delivery (issue 19.1): the handler ran once, without a
      // redelivery and without a counted attempt (maxAttempts 1 would otherwise have parked it)
      assertThat(deliveryCounts).containsExactly(1);
      assertThat(count("message_id = '" + id + "'")).isEqualTo(1);
    }
  }

  @Test
  void poisonMessageIsParkedAfterItsAttemptsAndAcked() throws Exception {
    String topic = PulsarExtension.uniqueTopic("poison");
    String group = "poison-" + UUID.randomUUID();
    AtomicInteger runs = new AtomicInteger();
    MessageHandler poison = (c, m) -> {
      runs.incrementAndGet();
      throw new IllegalStateException("cannot handle " + m.envelopeMessageId());
    };
    String id = UUID.randomUUID().toString();
    try (PulsarIdempotentConsumer consumer = PulsarIdempotentConsumer.builder().client(client).topic(topic)
        .handler(IdempotentHandler.builder().group(group).dataSource(db).handler(poison)
            .policy(
                FailurePolicy.defaults().withMaxAttempts(3).withBackoff(Duration.ofMillis(10), Duration.ofMillis(50)))
            .build())
        .redeliveryDelay(Duration.ofMillis(200)).consumers(1).start();
        Producer<byte[]> producer = client.newProducer().topic(topic).create()) {
      send(producer, id, "k", 1);
      await().atMost(Duration.ofSeconds(30))
          .until(() -> query("SELECT count(*) FROM converge_dlq WHERE consumer_group = '" + group + "'").get(0) == 1);
      await("acked: no redelivery runs the handler again").during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5))
          .until(() -> runs.get() == 3);
      assertThat(runs).hasValue(3);
    }
  }

  @Test
  void oneKeyIsHandledInPublishOrderAcrossConsumers() throws Exception {
    String topic = PulsarExtension.uniqueTopic("order");
    try (
        PulsarIdempotentConsumer consumer = PulsarIdempotentConsumer.builder().serviceUrl(pulsar.serviceUrl())
            .topic(topic)
            .handler(handler("order-" + UUID.randomUUID(), RECORD, db)).consumers(3).start();
        Producer<byte[]> producer = client.newProducer().topic(topic).create()) {
      for (int seq = 0; seq < 40; seq++) {
        send(producer, UUID.randomUUID().toString(), topic + "-key-" + (seq % 4), seq);
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> count("topic_key LIKE '" + topic + "-key-%'") == 40);
      for (int k = 0; k < 4; k++) {
        // rows are inserted in handling order; ctid order is insertion order for this small append-only table
        List<Long> seqs = query("SELECT seq FROM effect WHERE topic_key = '" + topic + "-key-" + k + "' ORDER BY ctid");
        assertThat(seqs).hasSize(10).isSorted();
      }
    }
  }

  @Test
  void invalidSettingsAreNamed() {
    IdempotentHandler h = handler("x", RECORD, db);
    org.assertj.core.api.Assertions
        .assertThatThrownBy(() -> PulsarIdempotentConsumer.builder().handler(h).topic("t").start())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("serviceUrl");
    org.assertj.core.api.Assertions
        .assertThatThrownBy(
            () -> PulsarIdempotentConsumer.builder().client(client).handler(h).topic("t").consumers(0).start())
        .hasMessageContaining("pulsar.consumers must be between 1 and 64, but was 0");
    org.assertj.core.api.Assertions
        .assertThatThrownBy(
            () -> PulsarIdempotentConsumer.builder().client(client).handler(h).topic("t").receiverQueueSize(0).start())
        .hasMessageContaining("pulsar.receiverQueueSize must be between 1 and 10000, but was 0");
  }

  private static IdempotentHandler handler(String group, MessageHandler h, DataSource ds) {
    return IdempotentHandler.builder().group(group).dataSource(ds).handler(h).build();
  }

  private static Object send(Producer<byte[]> producer, String id, String key, int seq) throws Exception {
    return producer.newMessage().key(key).properties(Map.of(Envelope.MESSAGE_ID, id))
        .value(Integer.toString(seq).getBytes(StandardCharsets.UTF_8)).send();
  }

  private static long count(String where) throws SQLException {
    return query("SELECT count(*) FROM effect WHERE " + where).get(0);
  }

  private static List<Long> query(String sql) throws SQLException {
    List<Long> out = new java.util.ArrayList<>();
    try (Connection c = db.getConnection();
        java.sql.Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getLong(1));
      }
    }
    return out;
  }
}
