package io.converge.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.converge.broker.postgres.PausablePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.FailureKind;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.Outcome;
import io.converge.producer.Envelope;
import io.converge.producer.schema.Migrations;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Issue 19.1 (c): the Pulsar binding waits out an outage of the handler's database (frozen past its
 * pool's connection timeout, for as long as three attempts would take): every message is processed once
 * after it, nothing is parked; closing the binding during an outage ends the wait and the message is
 * redelivered to the next consumer.
 */
@ExtendWith({PulsarExtension.class, PostgresExtension.class})
class PulsarDatabaseOutageIT {

  private static final Duration MAX_OUTAGE = Duration.ofSeconds(20);

  private static PulsarClient client;
  private static DataSource db;
  private static PausablePostgres handlerDb;
  private static HikariDataSource pool;

  @BeforeAll
  static void setUp(EmbeddedPulsar server, DataSource ds) throws Exception {
    db = ds;
    Migrations.apply(ds, "consumer");
    client = PulsarClient.builder().serviceUrl(server.serviceUrl()).build();
    handlerDb = PausablePostgres.start();
    pool = handlerDb.pool(2000);
    try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE effects (message_id text NOT NULL)");
    }
  }

  @AfterAll
  static void tearDown() throws Exception {
    client.close();
    pool.close();
    handlerDb.close();
  }

  @Test
  void messagesArrivingDuringADatabaseOutageAreProcessedOnceAfterIt() throws Exception {
    String topic = PulsarExtension.uniqueTopic("dbout");
    String group = "dbout-" + UUID.randomUUID();
    Counting metrics = new Counting();
    JdbcTemplate dedup = new JdbcTemplate(db);
    List<String> ids = new ArrayList<>();
    try (PulsarIdempotentConsumer consumer = PulsarIdempotentConsumer.builder().client(client).topic(topic)
        .handler(handler(group, metrics)).consumers(2).start();
        Producer<byte[]> producer = client.newProducer().topic(topic).create()) {
      ids.add(send(producer, "k0"));
      ids.add(send(producer, "k1"));
      await().atMost(Duration.ofSeconds(60)).until(() -> count(dedup, group) == 2);

      handlerDb.freeze();
      try {
        for (int i = 0; i < 6; i++) {
          ids.add(send(producer, "k" + i));
        }
        // with main's behaviour both consumers would have used up their 3 attempts by now
        await().atMost(MAX_OUTAGE).until(() -> metrics.failures() >= 6);
      } finally {
        handlerDb.thaw();
      }
      await().atMost(Duration.ofSeconds(90)).until(() -> count(dedup, group) == ids.size());
    }
    assertThat(dedup.queryForList("SELECT DISTINCT outcome FROM converge_dedup WHERE consumer_group = ?", String.class,
        group)).containsExactly("PROCESSED");
    assertThat(dedup.queryForObject("SELECT count(*) FROM converge_dlq WHERE consumer_group = ?", Long.class, group))
        .as("parked messages").isZero();
    assertThat(dedup.queryForObject("SELECT count(*) FROM converge_ticket WHERE consumer_group = ?", Long.class, group))
        .as("tickets").isZero();
    assertEffectsOnce(ids);
    assertThat(metrics.failures(FailureKind.UNAVAILABLE)).isGreaterThanOrEqualTo(6);
    assertThat(metrics.failures(FailureKind.TECHNICAL)).isZero();
  }

  @Test
  void closingTheBindingDuringAnOutageEndsTheWaitAndTheMessageIsRedelivered() throws Exception {
    String topic = PulsarExtension.uniqueTopic("dbclose");
    String group = "dbclose-" + UUID.randomUUID();
    Counting metrics = new Counting();
    JdbcTemplate dedup = new JdbcTemplate(db);
    String id;
    try (Producer<byte[]> producer = client.newProducer().topic(topic).create()) {
      PulsarIdempotentConsumer first = PulsarIdempotentConsumer.builder().client(client).topic(topic)
          .handler(handler(group, metrics)).consumers(1).start();
      handlerDb.freeze();
      try {
        id = send(producer, "k");
        await().atMost(MAX_OUTAGE).until(() -> metrics.failures(FailureKind.UNAVAILABLE) >= 1);
        Thread closer = new Thread(first::close, "closer");
        closer.start();
        closer.join(MAX_OUTAGE.toMillis());
        assertThat(closer.isAlive()).as("close() returns while the handler waits").isFalse();
      } finally {
        handlerDb.thaw();
      }
      assertThat(count(dedup, group)).as("nothing recorded for the interrupted message").isZero();
      try (PulsarIdempotentConsumer second = PulsarIdempotentConsumer.builder().client(client).topic(topic)
          .handler(handler(group, metrics)).consumers(1).start()) {
        await().atMost(Duration.ofSeconds(60)).until(() -> count(dedup, group) == 1);
      }
    }
    assertThat(dedup.queryForObject("SELECT outcome FROM converge_dedup WHERE consumer_group = ?", String.class, group))
        .isEqualTo("PROCESSED");
    assertEffectsOnce(List.of(id));
  }

  private static IdempotentHandler handler(String group, ConsumerMetrics metrics) {
    return IdempotentHandler.builder().group(group).dataSource(db).metrics(metrics)
        .policy(FailurePolicy.defaults().withMaxAttempts(3).withBackoff(Duration.ofMillis(100), Duration.ofMillis(200))
            .withMaxOutageBackoff(Duration.ofSeconds(1)))
        .handler((c, m) -> {
          try (Connection hc = pool.getConnection();
              PreparedStatement ps = hc.prepareStatement("INSERT INTO effects VALUES (?)")) {
            ps.setString(1, m.envelopeMessageId());
            ps.executeUpdate();
          }
        }).build();
  }

  private static void assertEffectsOnce(List<String> ids) {
    JdbcTemplate effects = new JdbcTemplate(pool);
    for (String id : ids) {
      assertThat(effects.queryForObject("SELECT count(*) FROM effects WHERE message_id = ?", Long.class, id))
          .as("effects of " + id).isEqualTo(1);
    }
  }

  private static long count(JdbcTemplate jdbc, String group) {
    return jdbc.queryForObject("SELECT count(*) FROM converge_dedup WHERE consumer_group = ?", Long.class, group);
  }

  private static String send(Producer<byte[]> producer, String key) throws Exception {
    String id = UUID.randomUUID().toString();
    producer.newMessage().key(key).property(Envelope.MESSAGE_ID, id).value(id.getBytes(StandardCharsets.UTF_8)).send();
    return id;
  }

  /** Counts failures by kind. */
  private static final class Counting implements ConsumerMetrics {

    private final Map<FailureKind, AtomicInteger> failures = new ConcurrentHashMap<>();

    @Override
    public void failure(String group, String topic, FailureKind kind) {
      failures.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
    }

    @Override
    public void outcome(String group, String topic, Outcome outcome) {
    }

    int failures(FailureKind kind) {
      AtomicInteger n = failures.get(kind);
      return n == null ? 0 : n.get();
    }

    int failures() {
      return failures.values().stream().mapToInt(AtomicInteger::get).sum();
    }
  }
}
