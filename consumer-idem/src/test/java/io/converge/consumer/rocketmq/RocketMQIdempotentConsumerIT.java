package io.converge.consumer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.BusinessException;
import io.converge.consumer.ConsumerOps;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import io.converge.consumer.Outcome;
import io.converge.consumer.micrometer.MicrometerConsumerMetrics;
import io.converge.producer.Envelope;
import io.converge.producer.schema.Migrations;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The RocketMQ binding on the real embedded broker and PostgreSQL: redeliveries really go through the broker. */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class RocketMQIdempotentConsumerIT {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String PROBE = "probe-";
  private static DefaultMQProducer producer;

  private final EmbeddedRocketMQ mq;
  private final DataSource ds;

  RocketMQIdempotentConsumerIT(EmbeddedRocketMQ mq, DataSource ds) {
    this.mq = mq;
    this.ds = ds;
  }

  @BeforeAll
  static void setUp(EmbeddedRocketMQ mq, DataSource ds) throws Exception {
    Migrations.apply(ds, "consumer");
    exec(ds, "CREATE TABLE ledger (id BIGSERIAL PRIMARY KEY, message_id TEXT, body TEXT)");
    producer = new DefaultMQProducer(RocketMQExtension.uniqueTopic("it-producer"));
    producer.setNamesrvAddr(mq.nameServerAddress());
    producer.setInstanceName(UUID.randomUUID().toString());
    producer.start();
  }

  @AfterAll
  static void tearDown() {
    if (producer != null) {
      producer.shutdown();
    }
  }

  private String topic() {
    String topic = RocketMQExtension.uniqueTopic("payments");
    mq.createTopic(topic);
    return topic;
  }

  private static void send(String topic, String messageId, String key, String body) throws Exception {
    Message m = new Message(topic, "*", key, body.getBytes(StandardCharsets.UTF_8));
    if (messageId != null) {
      m.putUserProperty(Envelope.MESSAGE_ID, messageId);
    }
    m.putUserProperty(Envelope.TENANT, "acme");
    assertThat(producer.send(m).getSendStatus()).isEqualTo(SendStatus.SEND_OK);
  }

  private IdempotentHandler.Builder handler(String group, MessageHandler h) {
    return IdempotentHandler.builder().group(group).dataSource(ds).handler(h)
        .policy(FailurePolicy.defaults().withBackoff(Duration.ofMillis(5), Duration.ofMillis(20)));
  }

  private RocketMQIdempotentConsumer consume(String topic, IdempotentHandler h) {
    return RocketMQIdempotentConsumer.builder().nameServer(mq.nameServerAddress()).topic(topic).handler(h)
        .consumeThreads(8).redeliveryDelayLevel(1).start();
  }

  /** Wraps a handler to count the outcomes the binding saw. */
  private static IdempotentHandler counting(IdempotentHandler h, Map<Outcome, AtomicInteger> seen) {
    return around(h, message -> {
      Outcome o = h.handle(message);
      seen.computeIfAbsent(o, k -> new AtomicInteger()).incrementAndGet();
      return o;
    });
  }

  /** {@code h} whose {@code handle} is {@code handle}. */
  private static IdempotentHandler around(IdempotentHandler h,
      java.util.function.Function<IncomingMessage, Outcome> handle) {
    return new IdempotentHandler() {

      @Override
      public Outcome handle(IncomingMessage message) {
        return handle.apply(message);
      }

      @Override
      public Outcome resume(long dlqId) {
        return h.resume(dlqId);
      }

      @Override
      public String group() {
        return h.group();
      }
    };
  }

  private long effects(String id) throws Exception {
    return count(ds, "SELECT count(*) FROM ledger WHERE message_id = '" + id + "'");
  }

  /**
   * Records that instance {@code name} consumed a probe message (id {@value #PROBE}...) and acks it
   * without running {@code h}; passes every other message to {@code h}.
   */
  private static IdempotentHandler probing(String name, Set<String> probed, IdempotentHandler h) {
    return around(h, message -> {
      if (message.envelopeMessageId() != null && message.envelopeMessageId().startsWith(PROBE)) {
        probed.add(name);
        return Outcome.PROCESSED;
      }
      return h.handle(message);
    });
  }

  private static void insertLedger(Connection c, IncomingMessage m) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO ledger (message_id, body) VALUES (?, ?)")) {
      ps.setString(1, m.envelopeMessageId());
      ps.setString(2, m.payloadAsString());
      ps.executeUpdate();
    }
  }

  @Test
  void sameMessageDeliveredFiveTimesHasOneEffect() throws Exception {
    String topic = topic();
    String group = RocketMQExtension.uniqueTopic("five");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    IdempotentHandler h = handler(group, RocketMQIdempotentConsumerIT::insertLedger)
        .metrics(MicrometerConsumerMetrics.of(registry, ConsumerOps.of(ds), Clock.systemUTC())).build();
    String id = UUID.randomUUID().toString();
    try (RocketMQIdempotentConsumer consumer = consume(topic, h)) {
      for (int i = 0; i < 5; i++) {
        send(topic, id, "order-1", "{\"n\":" + i + "}");
      }
      await().atMost(WAIT).until(() -> registry.find("consumer.duplicates").counters().stream()
          .mapToDouble(c -> c.count()).sum() >= 4);
    }
    assertThat(effects(id)).isEqualTo(1);
    assertThat(registry.get("consumer.processed").counter().count()).isEqualTo(1.0);
    assertThat(registry.get("consumer.duplicates").counter().count()).isEqualTo(4.0);
    assertThat(count(ds, "SELECT count(*) FROM converge_dedup WHERE tenant = 'acme' AND message_id = '" + id + "'"))
        .isEqualTo(1);
  }

  @Test
  void twentyCopiesOnTwoConsumerInstancesHaveOneEffect() throws Exception {
    String topic = topic();
    String group = RocketMQExtension.uniqueTopic("two");
    Map<Outcome, AtomicInteger> seen = new ConcurrentHashMap<>();
    MessageHandler slow = (c, m) -> {
      insertLedger(c, m);
      Thread.sleep(50); // a slow handler: the copies overlap on the claim (what the test exercises, not a wait)
    };
    String id = UUID.randomUUID().toString();
    Set<String> probed = ConcurrentHashMap.newKeySet();
    try (
        RocketMQIdempotentConsumer a = consume(topic,
            probing("a", probed, counting(handler(group, slow).build(), seen)));
        RocketMQIdempotentConsumer b = consume(topic,
            probing("b", probed, counting(handler(group, slow).build(), seen)))) {
      // both instances took queues in the rebalance once each consumed a probe (spread over the queues)
      await("both instances consume").atMost(WAIT).pollInterval(Duration.ofMillis(200)).until(() -> {
        send(topic, PROBE + UUID.randomUUID(), "probe", "{}");
        return probed.size() == 2;
      });
      for (int i = 0; i < 20; i++) {
        send(topic, id, "k-" + i, "{}"); // different keys: spread over the queues of both instances
      }
      await().atMost(WAIT).until(() -> seen.values().stream().mapToInt(AtomicInteger::get).sum() >= 20);
    }
    assertThat(effects(id)).isEqualTo(1);
    assertThat(seen.get(Outcome.PROCESSED)).hasValue(1);
    assertThat(seen.get(Outcome.DUPLICATE)).hasValue(19);
  }

  @Test
  void consumerFailingAfterCommitBeforeAckIsRedeliveredByTheBrokerWithOneEffect() throws Exception {
    String topic = topic();
    String group = RocketMQExtension.uniqueTopic("crash");
    IdempotentHandler real = handler(group, RocketMQIdempotentConsumerIT::insertLedger).build();
    List<Outcome> outcomes = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicInteger deliveries = new AtomicInteger();
    IdempotentHandler crashAfterCommit = new IdempotentHandler() {

      @Override
      public Outcome handle(IncomingMessage message) {
        Outcome o = real.handle(message); // committed
        outcomes.add(o);
        if (deliveries.incrementAndGet() == 1) {
          throw new IllegalStateException("simulated crash between commit and ack"); // no ack: broker redelivers
        }
        return o;
      }
      @Override
      public Outcome resume(long dlqId) {
        return real.resume(dlqId);
      }
      @Override
      public String group() {
        return real.group();
      }
    };
    String id = UUID.randomUUID().toString();
    try (RocketMQIdempotentConsumer consumer = consume(topic, crashAfterCommit)) {
      send(topic, id, "order-2", "{}");
      await().atMost(WAIT).until(() -> outcomes.size() >= 2);
    }
    assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.DUPLICATE);
    assertThat(effects(id)).isEqualTo(1);
  }

  @Test
  void businessFailureIsNotRetriedAndNotRerunOnRedelivery() throws Exception {
    String topic = topic();
    String group = RocketMQExtension.uniqueTopic("biz");
    AtomicInteger runs = new AtomicInteger();
    Map<Outcome, AtomicInteger> seen = new ConcurrentHashMap<>();
    IdempotentHandler h = handler(group, (c, m) -> {
      runs.incrementAndGet();
      insertLedger(c, m);
      throw new BusinessException("RISK_REJECTED", "risk score 97");
    }).build();
    String id = UUID.randomUUID().toString();
    try (RocketMQIdempotentConsumer consumer = consume(topic, counting(h, seen))) {
      send(topic, id, "order-3", "{}");
      await().atMost(WAIT).until(() -> seen.values().stream().mapToInt(AtomicInteger::get).sum() >= 1);
      // a redelivery after the refusal was recorded (a concurrent copy may run the handler itself: its
      // transaction rolls back as a whole and the claim decides, see IdempotentHandlerIT)
      send(topic, id, "order-3", "{}");
      await().atMost(WAIT).until(() -> seen.values().stream().mapToInt(AtomicInteger::get).sum() >= 2);
    }
    assertThat(runs).hasValue(1);
    assertThat(effects(id)).isZero();
    assertThat(seen.get(Outcome.BUSINESS_FAILURE)).hasValue(1);
    assertThat(seen.get(Outcome.DUPLICATE)).hasValue(1);
    assertThat(string(ds, "SELECT outcome FROM converge_dedup WHERE message_id = '" + id + "'"))
        .isEqualTo("BUSINESS_FAILURE");
  }

  @Test
  void messageWithoutIdIsRefusedAndVisibleInTheDlq() throws Exception {
    String topic = topic();
    String group = RocketMQExtension.uniqueTopic("noid");
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = handler(group, (c, m) -> runs.incrementAndGet()).build();
    try (RocketMQIdempotentConsumer consumer = consume(topic, h)) {
      send(topic, null, "order-4", "{\"foreign\":true}");
      await().atMost(WAIT)
          .until(() -> count(ds, "SELECT count(*) FROM converge_dlq WHERE consumer_group = '" + group + "'") == 1);
    }
    assertThat(runs).hasValue(0);
    assertThat(string(ds,
        "SELECT reason_code || ' ' || topic || ' ' || convert_from(payload, 'UTF8') FROM converge_dlq "
            + "WHERE consumer_group = '" + group + "'"))
        .isEqualTo("MISSING_MESSAGE_ID " + topic + " {\"foreign\":true}");
    assertThat(string(ds, "SELECT headers FROM converge_dlq WHERE consumer_group = '" + group + "'"))
        .contains("converge-tenant=acme").doesNotContain("KEYS=");
  }

  @Test
  void poisonMessageThroughTheBrokerEndsInTheDlqWithATicket() throws Exception {
    String topic = topic();
    String group = RocketMQExtension.uniqueTopic("poison");
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = handler(group, (c, m) -> {
      runs.incrementAndGet();
      throw new java.sql.SQLTransientException("downstream timeout");
    }).build();
    String id = UUID.randomUUID().toString();
    try (RocketMQIdempotentConsumer consumer = consume(topic, h)) {
      send(topic, id, "order-5", "{}");
      await().atMost(WAIT)
          .until(() -> count(ds, "SELECT count(*) FROM converge_ticket WHERE message_id = '" + id + "'") == 1);
    }
    assertThat(runs).hasValue(3);
    assertThat(string(ds, "SELECT reason_code || ' ' || attempts FROM converge_dlq WHERE message_id = '" + id + "'"))
        .isEqualTo("RETRIES_EXHAUSTED 3");
  }

  private static void exec(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static long count(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String string(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }
}
