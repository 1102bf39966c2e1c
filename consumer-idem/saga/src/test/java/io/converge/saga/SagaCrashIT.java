package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.CrashPoints;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A coordinator killed (Runtime.halt in a child JVM) just before and just after a transition's database commit; a
 * second coordinator, in this JVM, finishes the saga from the tables, the messages delivered again as a broker
 * would (at least once): every step's work runs once and the saga completes. The crash contract
 * ({@link SagaCrashContract}) on RocketMQ half messages (through the embedded broker, where the point after the DB
 * commit is the one before the broker's END COMMIT, so the command is delivered only by the check-back), and here on
 * the outbox (messages delivered by hand). Pulsar: {@code PulsarSagaCrashIT} in pulsar-adapter.
 */
@ExtendWith({ChildJvmExtension.class, RocketMQExtension.class})
class SagaCrashIT extends SagaCrashContract {

  private static EmbeddedRocketMQ mq;

  SagaCrashIT() {
    super(RocketMQSagaCrashBackend.class);
  }

  @BeforeAll
  static void rocketMQ(EmbeddedRocketMQ server) {
    mq = server;
  }

  @Override
  protected Map<String, String> env() {
    return Map.of("nameServer", mq.nameServerAddress());
  }

  @Override
  protected void createTopic(String topic) {
    mq.createTopic(topic);
  }

  @ParameterizedTest
  @EnumSource(value = CrashPoints.Point.class, names = {"BEFORE_DB_COMMIT", "AFTER_DB_COMMIT"})
  void aSecondCoordinatorFinishesTheOutboxSagaOfAKilledOne(CrashPoints.Point point, ChildJvms jvms) throws Exception {
    ConvergePostgres pg = ConvergePostgres.shared();
    String schema = "saga_crash_" + UUID.randomUUID().toString().substring(0, 8);
    try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
    }
    DataSource ds = pg.dataSource(schema);
    OrderSaga.migrate(ds);
    String id = "crash-" + point;
    ChildJvm child = jvms.launch(CrashingCoordinatorMain.class)
        .database(pg.jdbcUrl(), pg.user(), pg.password(), schema).args(id, point.name()).start();
    try {
      assertThat(child.awaitExit(Duration.ofSeconds(90))).as("halted; output:%n%s", child.output())
          .isEqualTo(ChildJvm.HALTED);
    } finally {
      child.close();
    }
    try (TxnProducer producer = TxnProducer.builder().group("survivor").dataSource(ds)
        .backend(OutboxBackend.outbox()).build()) {
      OrderSaga saga = new OrderSaga(ds, producer, "", null, b -> {
      });
      if (point == CrashPoints.Point.AFTER_DB_COMMIT) {
        assertThat(saga.events(id)).as("the transition committed").endsWith("REPLIED reserve 1", "SENT debit 1");
      } else {
        assertThat(saga.events(id)).as("the transition did not commit").endsWith("SENT reserve 1");
      }
      saga.pump(new Mailbox(ds)); // every message committed so far, again: the broker's at-least-once
      assertThat(saga.state(id)).isEqualTo("COMPLETED");
      assertThat(saga.effects(id)).containsExactly("reserve forward", "debit forward", "ship forward",
          "mark-paid forward");
      assertThat(saga.events(id)).containsOnlyOnce("REPLIED reserve 1", "SENT debit 1", "COMPLETED");
      saga.coordinator.close();
    }
  }
}
