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
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.outage.CountingMetrics;
import io.converge.consumer.outage.OutageChecks;
import io.converge.core.Envelope;
import io.converge.core.Migrations;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
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
  private static JdbcTemplate dedup;
  private static PausablePostgres handlerDb;
  private static HikariDataSource pool;

  @BeforeAll
  static void setUp(EmbeddedPulsar server, DataSource ds) throws Exception {
    db = ds;
    dedup = new JdbcTemplate(ds);
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
    CountingMetrics metrics = new CountingMetrics();
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
    OutageChecks.assertAllProcessedNoneParked(dedup, group);
    assertEffectsOnce(ids);
    assertThat(metrics.failures(FailureKind.UNAVAILABLE)).isGreaterThanOrEqualTo(6);
    assertThat(metrics.failures(FailureKind.TECHNICAL)).isZero();
  }

  @Test
  void closingTheBindingDuringAnOutageEndsTheWaitAndTheMessageIsRedelivered() throws Exception {
    String topic = PulsarExtension.uniqueTopic("dbclose");
    String group = "dbclose-" + UUID.randomUUID();
    CountingMetrics metrics = new CountingMetrics();
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
    return OutageChecks.effectsHandler(group, db, pool).metrics(metrics).build();
  }

  private static void assertEffectsOnce(List<String> ids) {
    OutageChecks.assertOnceEach(pool, "effects", ids);
  }

  private static long count(JdbcTemplate jdbc, String group) {
    return jdbc.queryForObject("SELECT count(*) FROM converge_dedup WHERE consumer_group = ?", Long.class, group);
  }

  private static String send(Producer<byte[]> producer, String key) throws Exception {
    String id = UUID.randomUUID().toString();
    producer.newMessage().key(key).property(Envelope.MESSAGE_ID, id).value(id.getBytes(StandardCharsets.UTF_8)).send();
    return id;
  }
}
