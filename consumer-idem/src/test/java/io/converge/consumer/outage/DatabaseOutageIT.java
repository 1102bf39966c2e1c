package io.converge.consumer.outage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.converge.broker.postgres.PausablePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.FailureKind;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.rocketmq.RawRocketMQ;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Issue 19.1 (a): the handler's database is frozen for longer than its pool's connection timeout, for
 * as long as the failure policy's three attempts would take. The RocketMQ binding waits the outage out:
 * every message that arrived meanwhile is processed once after it, nothing is parked or ticketed.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class DatabaseOutageIT {

  @RegisterExtension
  static final RawRocketMQ raw = new RawRocketMQ();

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
      IdempotentHandler handler = OutageChecks.effectsHandler(group, ds, pool).metrics(metrics).build();
      JdbcTemplate dedup = new JdbcTemplate(ds);
      List<String> ids = new ArrayList<>();
      try (RocketMQIdempotentConsumer consumer = RocketMQIdempotentConsumer.builder().nameServer(mq.nameServerAddress())
          .topic(topic).handler(handler).consumeThreads(2).start()) {
        for (int i = 0; i < 2; i++) {
          ids.add(raw.sendNew(topic));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> processed(dedup, group) == 2);

        // both consumer threads meet the outage; with main's behaviour each would have used up its 3 attempts
        ids.addAll(OutageChecks.sendDuringOutage(handlerDb::freeze, handlerDb::thaw, 6, () -> raw.sendNew(topic),
            metrics, MAX_OUTAGE, Duration.ofSeconds(2)));

        await().atMost(Duration.ofSeconds(90)).until(() -> dedup.queryForObject(
            "SELECT count(*) FROM converge_dedup WHERE consumer_group = ?", Long.class, group) == ids.size());
        OutageChecks.assertAllProcessedNoneParked(dedup, group);
        assertThat(dedup.queryForObject("SELECT count(*) FROM converge_consumer_attempt WHERE consumer_group = ?",
            Long.class, group)).as("counted attempts").isZero();
        OutageChecks.assertOnceEach(pool, "effects", ids);
        assertThat(metrics.failures(FailureKind.UNAVAILABLE)).isGreaterThanOrEqualTo(6);
        assertThat(metrics.failures(FailureKind.TECHNICAL)).isZero();
      }
    }
  }

  private static long processed(JdbcTemplate jdbc, String group) {
    return jdbc.queryForObject("SELECT count(*) FROM converge_dedup WHERE consumer_group = ? AND outcome = 'PROCESSED'",
        Long.class, group);
  }

}
