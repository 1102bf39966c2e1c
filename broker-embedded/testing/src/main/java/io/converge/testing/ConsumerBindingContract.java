package io.converge.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.consumer.ConsumerOps;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import io.converge.consumer.Outcome;
import io.converge.consumer.micrometer.MicrometerConsumerMetrics;
import io.converge.consumer.spi.ForwardingIdempotentHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLTransientException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The guarantees every consumer binding of {@link IdempotentHandler} gives, proved on the real broker and
 * PostgreSQL: the ack follows the handler's commit (a handled-but-not-acked message is redelivered and
 * absorbed), a real redelivery is absorbed, concurrent copies take effect once, a failing message is parked
 * in the dead-letter table after its attempts, the tenant is part of the identity, one key is handled in
 * publish order, and a parked message holds the later messages of its key (and only of its key) until it is
 * resumed or discarded, after which they run in their order.
 *
 * <p>A binding's IT extends this class, registers its broker's extension and implements the hooks; it never
 * overrides a test.
 */
@ExtendWith(PostgresExtension.class)
public abstract class ConsumerBindingContract {

  /** The deadline of every wait. */
  protected static final Duration WAIT = Duration.ofSeconds(60);

  /** The test class's schema (one per class, see {@link PostgresExtension}). */
  protected static DataSource ds;

  @BeforeAll
  static void contractSchema(DataSource dataSource) throws Exception {
    ds = dataSource;
    io.converge.core.Migrations.apply(ds, "consumer");
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS binding_effect "
          + "(id BIGSERIAL PRIMARY KEY, message_id TEXT, tenant TEXT, topic_key TEXT, body TEXT)");
    }
  }

  /** A new topic, unique to the caller, created on the broker if the broker needs it. */
  protected abstract String newTopic(String prefix);

  /**
   * Starts the binding on {@code topic} with {@code instances} consumers of {@code handler}'s group, every one
   * of them consuming when this returns; a lost ack is redelivered after at most a second or so, and held
   * messages are released within a fraction of a second of their key becoming free.
   */
  protected abstract AutoCloseable start(String topic, IdempotentHandler handler, int instances) throws Exception;

  /**
   * Publishes one message through the raw broker client: envelope id {@code messageId}, tenant, key, body; one
   * key always goes to one queue or partition (as Converge's producers send it).
   */
  protected abstract void send(String topic, String messageId, String tenant, String key, String body)
      throws Exception;

  /**
   * Publishes as {@link #send(String, String, String, String, String)} does, but on the queue or partition that
   * {@code routeAs}'s key selects rather than {@code key}'s: a message whose key the schema cannot hold, followed on
   * its own queue by a valid one.
   */
  protected abstract void send(String topic, String messageId, String tenant, String key, String routeAs,
      String body) throws Exception;

  /** How many consumers the concurrent-copies test starts (the copies race across them). */
  protected abstract int concurrentInstances();

  /** The handler's business write: one row per run, on the dedup transaction's connection. */
  protected static final MessageHandler RECORD = (c, m) -> {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO binding_effect (message_id, tenant, topic_key, body) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, m.envelopeMessageId());
      ps.setString(2, m.tenant());
      ps.setString(3, m.brokerKey());
      ps.setString(4, m.payloadAsString());
      ps.executeUpdate();
    }
  };

  /** A handler of {@code group} with short retry backoffs. */
  protected static IdempotentHandler.Builder handler(String group, MessageHandler h) {
    return IdempotentHandler.builder().group(group).dataSource(ds).handler(h)
        .policy(FailurePolicy.defaults().withBackoff(Duration.ofMillis(5), Duration.ofMillis(20)));
  }

  /** A group name unique to this run. */
  protected static String group(String prefix) {
    return prefix + "-" + UUID.randomUUID();
  }

  /** {@code h} whose {@code handle} is {@code handle} ({@link ForwardingIdempotentHandler#around}). */
  public static IdempotentHandler around(IdempotentHandler h, Function<IncomingMessage, Outcome> handle) {
    return ForwardingIdempotentHandler.around(h, handle);
  }

  /** Wraps a handler to count the outcomes the binding saw. */
  protected static IdempotentHandler counting(IdempotentHandler h, Map<Outcome, AtomicInteger> seen) {
    return around(h, message -> {
      Outcome o = h.handle(message);
      seen.computeIfAbsent(o, k -> new AtomicInteger()).incrementAndGet();
      return o;
    });
  }

  private static int total(Map<Outcome, AtomicInteger> seen) {
    return seen.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  /** The effects of message {@code id}. */
  protected static long effects(String id) throws Exception {
    return count("SELECT count(*) FROM binding_effect WHERE message_id = '" + id + "'");
  }

  protected static long count(String sql) throws Exception {
    return longs(sql).get(0);
  }

  protected static List<Long> longs(String sql) throws Exception {
    List<Long> out = new ArrayList<>();
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getLong(1));
      }
    }
    return out;
  }

  protected static String string(String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  @Test
  void aDeliveryHandledButNotAckedIsRedeliveredAndTakesEffectOnce() throws Exception {
    String topic = newTopic("unacked");
    IdempotentHandler real = handler(group("unacked"), RECORD).build();
    List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    List<Integer> deliveries = new CopyOnWriteArrayList<>();
    // the first delivery commits its effect, then the ack is lost (the binding sees a failure: no ack)
    IdempotentHandler losesFirstAck = around(real, m -> {
      Outcome o = real.handle(m); // committed
      outcomes.add(o);
      deliveries.add(m.deliveryCount());
      if (outcomes.size() == 1) {
        throw new IllegalStateException("test: the ack of " + m.envelopeMessageId() + " is lost");
      }
      return o;
    });
    String id = UUID.randomUUID().toString();
    try (AutoCloseable consumer = start(topic, losesFirstAck, 1)) {
      send(topic, id, "acme", "order-2", "1");
      await().atMost(WAIT).until(() -> outcomes.size() >= 2);
      await("acked now: nothing more comes").during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
          .until(() -> outcomes.size() == 2);
    }
    assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.DUPLICATE);
    assertThat(deliveries).containsExactly(1, 2);
    assertThat(effects(id)).isEqualTo(1);
  }

  @Test
  void sameMessageDeliveredFiveTimesHasOneEffect() throws Exception {
    String topic = newTopic("five");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    IdempotentHandler h = handler(group("five"), RECORD)
        .metrics(MicrometerConsumerMetrics.of(registry, ConsumerOps.of(ds), Clock.systemUTC())).build();
    String id = UUID.randomUUID().toString();
    try (AutoCloseable consumer = start(topic, h, 1)) {
      for (int i = 0; i < 5; i++) {
        send(topic, id, "acme", "order-1", Integer.toString(i));
      }
      await().atMost(WAIT).until(() -> registry.find("consumer.duplicates").counters().stream()
          .mapToDouble(c -> c.count()).sum() >= 4);
    }
    assertThat(effects(id)).isEqualTo(1);
    assertThat(registry.get("consumer.processed").counter().count()).isEqualTo(1.0);
    assertThat(registry.get("consumer.duplicates").counter().count()).isEqualTo(4.0);
    assertThat(count("SELECT count(*) FROM converge_dedup WHERE tenant = 'acme' AND message_id = '" + id + "'"))
        .isEqualTo(1);
  }

  @Test
  void twentyConcurrentCopiesOnSeveralConsumersHaveOneEffect() throws Exception {
    String topic = newTopic("dup");
    String group = group("dup");
    Map<Outcome, AtomicInteger> seen = new ConcurrentHashMap<>();
    MessageHandler slow = (c, m) -> {
      RECORD.handle(c, m);
      Thread.sleep(50); // a slow handler: the copies overlap on the claim (what the test exercises, not a wait)
    };
    String id = UUID.randomUUID().toString();
    try (AutoCloseable consumer = start(topic, counting(handler(group, slow).build(), seen), concurrentInstances())) {
      ExecutorService senders = Executors.newFixedThreadPool(10);
      List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        // different keys: the copies go to different consumers and race on the claim
        String key = "k-" + i;
        sent.add(senders.submit(() -> {
          send(topic, id, "acme", key, "1");
          return null;
        }));
      }
      senders.shutdown();
      for (java.util.concurrent.Future<?> f : sent) {
        f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      }
      await().atMost(WAIT).until(() -> total(seen) >= 20);
      await("one effect of the copies").during(Duration.ofSeconds(1)).atMost(WAIT)
          .until(() -> effects(id) == 1);
    }
    assertThat(effects(id)).isEqualTo(1);
    assertThat(seen.get(Outcome.PROCESSED)).hasValue(1);
    assertThat(seen.get(Outcome.DUPLICATE)).hasValue(19);
  }

  @Test
  void poisonMessageIsParkedInTheDlqWithATicketAfterItsAttemptsAndAcked() throws Exception {
    String topic = newTopic("poison");
    String group = group("poison");
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = handler(group, (c, m) -> {
      runs.incrementAndGet();
      throw new SQLTransientException("downstream timeout");
    }).policy(FailurePolicy.defaults().withMaxAttempts(3).withBackoff(Duration.ofMillis(10), Duration.ofMillis(50)))
        .build();
    String id = UUID.randomUUID().toString();
    try (AutoCloseable consumer = start(topic, h, 1)) {
      send(topic, id, "acme", "order-5", "1");
      await().atMost(WAIT)
          .until(() -> count("SELECT count(*) FROM converge_ticket WHERE message_id = '" + id + "'") == 1);
      assertThat(count("SELECT count(*) FROM converge_dlq WHERE consumer_group = '" + group + "'")).isEqualTo(1);
      await("acked: no redelivery runs the handler again").during(Duration.ofMillis(1500))
          .atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 3);
    }
    assertThat(runs).hasValue(3);
    assertThat(string("SELECT reason_code || ' ' || attempts FROM converge_dlq WHERE message_id = '" + id + "'"))
        .isEqualTo("RETRIES_EXHAUSTED 3");
  }

  @Test
  void theTenantComesFromTheEnvelope() throws Exception {
    String topic = newTopic("tenant");
    String id = UUID.randomUUID().toString();
    String marker = UUID.randomUUID().toString();
    try (AutoCloseable consumer = start(topic, handler(group("tenant"), RECORD).build(), 1)) {
      for (String tenant : List.of("acme", "globex", "acme")) {
        send(topic, id, tenant, "k", "1");
      }
      send(topic, marker, "acme", "k", "2");
      await().atMost(WAIT).until(() -> effects(marker) == 1);
      // one id, two tenants: two messages; the second copy of acme's is a duplicate
      await().atMost(WAIT).until(() -> effects(id) == 2);
      await("the second copy of acme's is absorbed").during(Duration.ofSeconds(1)).atMost(WAIT)
          .until(() -> effects(id) == 2);
    }
    assertThat(effects(id)).isEqualTo(2);
    assertThat(longs("SELECT count(DISTINCT tenant) FROM binding_effect WHERE message_id = '" + id + "'"))
        .containsExactly(2L);
  }

  @Test
  void oneKeyIsHandledInPublishOrderAcrossConsumers() throws Exception {
    String topic = newTopic("order");
    try (AutoCloseable consumer = start(topic, handler(group("order"), RECORD).build(), 3)) {
      for (int seq = 0; seq < 40; seq++) {
        send(topic, UUID.randomUUID().toString(), "acme", topic + "-key-" + (seq % 4), Integer.toString(seq));
      }
      await().atMost(WAIT)
          .until(() -> count("SELECT count(*) FROM binding_effect WHERE topic_key LIKE '" + topic + "-key-%'") == 40);
    }
    for (int k = 0; k < 4; k++) {
      // rows are inserted in handling order; ctid order is insertion order for this small append-only table
      List<Long> seqs = longs(
          "SELECT body::bigint FROM binding_effect WHERE topic_key = '" + topic + "-key-" + k + "' ORDER BY ctid");
      assertThat(seqs).hasSize(10).isSorted();
    }
  }

  @Test
  void anEnvelopeTheTablesCannotHoldIsParkedAndItsQueueMovesOn() throws Exception {
    String topic = newTopic("envelope");
    String group = group("envelope");
    String key = topic + "-k";
    StringBuilder longKey = new StringBuilder(key);
    Random random = new Random(31);
    while (longKey.length() < 3100) {
      longKey.append((char) ('!' + random.nextInt(94))); // printable, no space, hardly compressible
    }
    List<String> bad = List.of("tenant-65", "tenant-nul", "key-nul", "key-3100");
    String ok = UUID.randomUUID().toString();
    IdempotentHandler h = handler(group, (c, m) -> {
      if (m.payloadAsString().equals("error-nul")) {
        throw new NumberFormatException("For input string: \"12\u00003\""); // foreign data quoted in an error
      }
      RECORD.handle(c, m);
    }).policy(FailurePolicy.defaults().withMaxAttempts(2).withBackoff(Duration.ofMillis(5), Duration.ofMillis(20)))
        .build();
    try (AutoCloseable consumer = start(topic, h, 1)) {
      // a foreign producer's envelopes, then a valid message on the same queue: it must not wait behind them
      send(topic, "tenant-65-" + ok, "t".repeat(65), key, key, "tenant-65");
      send(topic, "tenant-nul-" + ok, "acme\u0000", key, key, "tenant-nul");
      send(topic, "key-nul-" + ok, "acme", key + "\u0000", key, "key-nul");
      send(topic, "key-3100-" + ok, "acme", longKey.toString(), key, "key-3100");
      send(topic, ok, "acme", key, key, "ok");
      await("the queue moves on past the invalid envelopes").atMost(Duration.ofSeconds(30))
          .until(() -> effects(ok) == 1);
      await().atMost(WAIT).until(() -> count("SELECT count(*) FROM converge_dlq WHERE consumer_group = '" + group
          + "'") == bad.size());
      List<ConsumerOps.DeadLetter> parked = ConsumerOps.of(ds).parked(1000).stream()
          .filter(d -> d.group().equals(group)).toList();
      assertThat(parked).extracting(ConsumerOps.DeadLetter::reasonCode).containsOnly("INVALID_ENVELOPE");
      assertThat(parked).extracting(ConsumerOps.DeadLetter::reason).satisfiesExactly(
          r -> assertThat(r).isEqualTo("converge-tenant: 65 characters, at most 64: '" + "t".repeat(65) + "'"),
          r -> assertThat(r).isEqualTo("converge-tenant: contains NUL, which PostgreSQL text cannot hold: "
              + "'acme\\u0000'"),
          r -> assertThat(r).isEqualTo("message key: contains NUL, which PostgreSQL text cannot hold: '" + key
              + "\\u0000'"),
          r -> assertThat(r).startsWith("message key: 3100 bytes in UTF-8, at most 1024: '" + key).endsWith("…'")
              .hasSizeLessThan(300));
      assertThat(parked).extracting(ConsumerOps.DeadLetter::messageId)
          .containsExactly("tenant-65-" + ok, "tenant-nul-" + ok, "key-nul-" + ok, "key-3100-" + ok);
      // nothing lost: the payload and the headers as sent are kept for a person to publish again
      assertThat(longs("SELECT count(*) FROM converge_dlq WHERE consumer_group = '" + group
          + "' AND strpos(headers, 'converge-tenant=acme%00') > 0 AND convert_from(payload, 'UTF8') = 'tenant-nul'"))
          .containsExactly(1L);
      // a row that cannot be stored as sent cannot run as sent either: discard it once it is published again
      assertThat(ConsumerOps.of(ds).redrive(parked.get(0).id())).isFalse();
      assertThatThrownBy(() -> h.resume(parked.get(2).id()))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("publish its payload again");
      // a NUL in the id, and a handler failure whose text quotes one: both recorded escaped, the queue moves on
      String after = UUID.randomUUID().toString();
      send(topic, "id\u0000" + ok, "acme", key + "-id", key, "id-nul");
      send(topic, "error-nul-" + ok, "acme", key + "-error", key, "error-nul");
      send(topic, after, "acme", key, key, "ok");
      await("the queue moves on past a NUL id and a NUL error text").atMost(Duration.ofSeconds(30))
          .until(() -> effects(after) == 1);
      await().atMost(WAIT).until(() -> count("SELECT count(*) FROM converge_dlq WHERE consumer_group = '" + group
          + "'") == bad.size() + 2);
      assertThat(ConsumerOps.of(ds).parked(1000).stream().filter(d -> d.group().equals(group))
          .skip(bad.size()).map(ConsumerOps.DeadLetter::reason).toList()).satisfiesExactly(
              r -> assertThat(r).contains("'id\\u0000" + ok + "'"),
              r -> assertThat(r).contains("12\\u00003"));
    }
    for (String body : bad) {
      assertThat(count("SELECT count(*) FROM binding_effect WHERE body = '" + body + "' AND message_id LIKE '%" + ok
          + "'")).as(body).isZero();
    }
  }

  /** Keys A and B: A's first message is parked, A's later two are held behind it, B flows on. */
  private record Held(String topic, IdempotentHandler handler, AtomicBoolean poisoned, String keyA, String keyB,
      long headId, AutoCloseable consumer) {
  }

  private Held parkTheHeadOfKeyA(String prefix) throws Exception {
    String topic = newTopic(prefix);
    String group = group(prefix);
    AtomicBoolean poisoned = new AtomicBoolean(true);
    IdempotentHandler h = handler(group, (c, m) -> {
      if (poisoned.get() && m.payloadAsString().equals("A0")) {
        throw new SQLTransientException("test: downstream refuses A0");
      }
      RECORD.handle(c, m);
    }).policy(FailurePolicy.defaults().withMaxAttempts(2).withBackoff(Duration.ofMillis(5), Duration.ofMillis(20)))
        .build();
    String keyA = topic + "-A";
    String keyB = topic + "-B";
    AutoCloseable consumer = start(topic, h, 1);
    for (String body : List.of("A0", "B0", "A1", "B1", "A2", "B2")) {
      send(topic, UUID.randomUUID().toString(), "acme", body.startsWith("A") ? keyA : keyB, body);
    }
    await().atMost(WAIT).until(() -> count("SELECT count(*) FROM converge_dlq WHERE consumer_group = '" + group
        + "' AND reason_code = 'HELD'") == 2);
    await().atMost(WAIT).until(() -> bodies(keyB).size() == 3);
    long head = count("SELECT id FROM converge_dlq WHERE consumer_group = '" + group
        + "' AND reason_code = 'RETRIES_EXHAUSTED' AND status = 'PARKED'");
    assertThat(bodies(keyA)).as("nothing of key A is applied over the gap").isEmpty();
    assertThat(bodies(keyB)).as("key B flows on").containsExactly("B0", "B1", "B2");
    List<ConsumerOps.DeadLetter> parked = ConsumerOps.of(ds).parked(1000).stream()
        .filter(d -> d.group().equals(group)).toList();
    assertThat(parked).extracting(d -> d.reasonCode() + ": " + d.reason()).hasSize(3)
        .contains("HELD: behind a parked message of this key");
    assertThat(parked.get(0).id()).isEqualTo(head);
    return new Held(topic, h, poisoned, keyA, keyB, head, consumer);
  }

  /** The bodies handled for {@code key}, in handling order. */
  private static List<String> bodies(String key) throws Exception {
    List<String> out = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT body FROM binding_effect WHERE topic_key = ? ORDER BY id")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    return out;
  }

  @Test
  void aParkedMessageHoldsItsKeyOnlyAndResumingItReleasesTheHeldOnesInOrder() throws Exception {
    Held held = parkTheHeadOfKeyA("hold-resume");
    try (AutoCloseable consumer = held.consumer()) {
      held.poisoned().set(false); // a person fixed the cause
      assertThat(held.handler().resume(held.headId())).isEqualTo(Outcome.PROCESSED);
      await().atMost(WAIT).until(() -> bodies(held.keyA()).size() == 3);
      // the key is free again: a new message of it is applied directly, after the released ones
      send(held.topic(), UUID.randomUUID().toString(), "acme", held.keyA(), "A3");
      await().atMost(WAIT).until(() -> bodies(held.keyA()).size() == 4);
    }
    assertThat(bodies(held.keyA())).containsExactly("A0", "A1", "A2", "A3");
    assertThat(count("SELECT count(*) FROM converge_dlq WHERE consumer_group = '" + held.handler().group()
        + "' AND status = 'PARKED'")).isZero();
  }

  @Test
  void discardingAParkedMessageReleasesTheHeldOnesInOrder() throws Exception {
    Held held = parkTheHeadOfKeyA("hold-discard");
    try (AutoCloseable consumer = held.consumer()) {
      assertThat(ConsumerOps.of(ds).discard(held.headId())).isTrue();
      await().atMost(WAIT).until(() -> bodies(held.keyA()).size() == 2);
    }
    assertThat(bodies(held.keyA())).containsExactly("A1", "A2");
    assertThat(string("SELECT string_agg(status, ',' ORDER BY id) FROM converge_dlq WHERE consumer_group = '"
        + held.handler().group() + "'")).isEqualTo("DISCARDED,RESUMED,RESUMED");
  }
}
