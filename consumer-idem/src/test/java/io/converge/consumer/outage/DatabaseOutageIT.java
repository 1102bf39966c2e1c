package io.converge.consumer.outage;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.converge.broker.postgres.PausablePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.FailureKind;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.producer.Envelope;
import io.converge.producer.schema.Migrations;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Issue 19.1 (a): the handler's database is frozen for longer than its pool's connection timeout, for
 * as long as the failure policy's three attempts would take. The RocketMQ binding waits the outage out:
 * every message that arrived meanwhile is processed once after it, nothing is parked or ticketed.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class DatabaseOutageIT {

  /** Bound of the outage: the test thaws the database after this at the latest. */
  static final Duration MAX_OUTAGE = Duration.ofSeconds(20);

  @Test
  void messagesArrivingDuringADatabaseOutageAreProcessedOnceAfterIt(EmbeddedRocketMQ mq, DataSource ds)
      throws Exception {
    Migrations.apply(ds, "consumer");
    String topic = RocketMQExtension.uniqueTopic("dbout");
    String group = RocketMQExtension.uniqueTopic("dbout-group");
    mq.createTopic(topic);
    CountingMetrics metrics = new CountingMetrics();
    try (PausablePostgres handlerDb = PausablePostgres.start(); HikariDataSource pool = handlerDb.pool(2000)) {
      try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE effects (message_id text NOT NULL)");
      }
      IdempotentHandler handler = IdempotentHandler.builder().group(group).dataSource(ds).metrics(metrics)
          .policy(
              FailurePolicy.defaults().withMaxAttempts(3).withBackoff(Duration.ofMillis(100), Duration.ofMillis(200))
                  .withMaxOutageBackoff(Duration.ofSeconds(1)))
          .handler((c, m) -> {
            try (Connection hc = pool.getConnection();
                PreparedStatement ps = hc.prepareStatement("INSERT INTO effects VALUES (?)")) {
              ps.setString(1, m.envelopeMessageId());
              ps.executeUpdate();
            }
          }).build();
      DefaultMQProducer producer = new DefaultMQProducer(RocketMQExtension.uniqueTopic("dbout-producer"));
      producer.setNamesrvAddr(mq.nameServerAddress());
      producer.setInstanceName(UUID.randomUUID().toString());
      producer.start();
      JdbcTemplate dedup = new JdbcTemplate(ds);
      List<String> ids = new ArrayList<>();
      try (RocketMQIdempotentConsumer consumer = RocketMQIdempotentConsumer.builder().nameServer(mq.nameServerAddress())
          .topic(topic).handler(handler).consumeThreads(2).start()) {
        for (int i = 0; i < 2; i++) {
          ids.add(send(producer, topic));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> processed(dedup, group) == 2);

        handlerDb.freeze();
        long frozenAt = System.nanoTime();
        try {
          for (int i = 0; i < 6; i++) {
            ids.add(send(producer, topic));
          }
          // both consumer threads meet the outage; with main's behaviour each would have used up its 3 attempts
          await().atMost(MAX_OUTAGE).until(() -> metrics.failures() >= 6);
        } finally {
          handlerDb.thaw();
        }
        Duration outage = Duration.ofNanos(System.nanoTime() - frozenAt);
        assertThat(outage).isLessThanOrEqualTo(MAX_OUTAGE.plusSeconds(2));

        await().atMost(Duration.ofSeconds(90)).until(() -> dedup.queryForObject(
            "SELECT count(*) FROM converge_dedup WHERE consumer_group = ?", Long.class, group) == ids.size());
        assertThat(
            dedup.queryForList("SELECT DISTINCT outcome FROM converge_dedup WHERE consumer_group = ?", String.class,
                group))
            .containsExactly("PROCESSED");
        assertThat(
            dedup.queryForObject("SELECT count(*) FROM converge_dlq WHERE consumer_group = ?", Long.class, group))
            .as("parked messages").isZero();
        assertThat(
            dedup.queryForObject("SELECT count(*) FROM converge_ticket WHERE consumer_group = ?", Long.class, group))
            .as("tickets").isZero();
        assertThat(dedup.queryForObject("SELECT count(*) FROM converge_consumer_attempt WHERE consumer_group = ?",
            Long.class, group)).as("counted attempts").isZero();
        JdbcTemplate effects = new JdbcTemplate(pool);
        for (String id : ids) {
          assertThat(effects.queryForObject("SELECT count(*) FROM effects WHERE message_id = ?", Long.class, id))
              .as("effects of " + id).isEqualTo(1);
        }
        assertThat(metrics.failures(FailureKind.UNAVAILABLE)).isGreaterThanOrEqualTo(6);
        assertThat(metrics.failures(FailureKind.TECHNICAL)).isZero();
      } finally {
        producer.shutdown();
      }
    }
  }

  private static long processed(JdbcTemplate jdbc, String group) {
    return jdbc.queryForObject("SELECT count(*) FROM converge_dedup WHERE consumer_group = ? AND outcome = 'PROCESSED'",
        Long.class, group);
  }

  private static String send(DefaultMQProducer producer, String topic) throws Exception {
    String id = UUID.randomUUID().toString();
    Message m = new Message(topic, ("{\"id\":\"" + id + "\"}").getBytes(UTF_8));
    m.putUserProperty(Envelope.MESSAGE_ID, id);
    producer.send(m);
    return id;
  }
}
