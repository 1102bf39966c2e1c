package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.CrashPoints;
import io.converge.producer.rocketmq.RocketMQBackend;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A coordinator killed (Runtime.halt in a child JVM) just before and just after a transition's database commit; a
 * second coordinator, in this JVM, finishes the saga from the tables, the messages delivered again as a broker
 * would (at least once): every step's work runs once and the saga completes. One parameterized test per backend:
 * outbox (messages delivered by hand) and RocketMQ half messages (through the embedded broker, where the point after
 * the DB commit is the one before the broker's END COMMIT, so the command is delivered only by the check-back).
 */
@ExtendWith({ChildJvmExtension.class, RocketMQExtension.class})
class SagaCrashIT {

  /** The saga's topics under {@code prefix}: replies, and each participant's commands and compensations. */
  static List<String> topics(String prefix) {
    List<String> topics = new ArrayList<>(List.of(prefix + OrderSaga.REPLIES));
    for (String p : List.of("inventory", "account", "shipping")) {
      topics.add(prefix + p + "-cmd");
      topics.add(prefix + p + "-comp");
    }
    return topics;
  }

  @ParameterizedTest
  @EnumSource(value = CrashPoints.Point.class, names = {"BEFORE_DB_COMMIT", "AFTER_DB_COMMIT"})
  void aSecondCoordinatorFinishesTheSagaOfAKilledOne(CrashPoints.Point point, ChildJvms jvms) throws Exception {
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

  /**
   * RocketMQ half messages. Killed before the DB commit: the transition's half message (the debit command) is checked
   * back and rolled back, the reply is consumed again by the survivor and applied once. Killed after the DB commit
   * and before END COMMIT: the half message is checked back by the survivor's producer (same group) and committed, so
   * the debit command reaches the participant while no coordinator runs at all; then the survivor's coordinator
   * finishes the saga. Either way every step's work runs once and each transition's event is recorded once.
   */
  @ParameterizedTest
  @EnumSource(value = CrashPoints.Point.class, names = {"BEFORE_DB_COMMIT", "AFTER_DB_COMMIT"})
  void aSecondCoordinatorFinishesTheHalfMessageSagaOfAKilledOne(CrashPoints.Point point, ChildJvms jvms,
      EmbeddedRocketMQ mq) throws Exception {
    ConvergePostgres pg = ConvergePostgres.shared();
    String schema = "saga_crash_mq_" + UUID.randomUUID().toString().substring(0, 8);
    try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
    }
    DataSource ds = pg.dataSource(schema);
    OrderSaga.migrate(ds);
    String prefix = RocketMQExtension.uniqueTopic("sc") + "-";
    List<String> topics = topics(prefix);
    topics.forEach(mq::createTopic);
    String group = RocketMQExtension.uniqueTopic("scp");
    String id = "crash-mq-" + point;
    ChildJvm child = jvms.launch(CrashingCoordinatorMain.class)
        .database(pg.jdbcUrl(), pg.user(), pg.password(), schema)
        .args(id, point.name(), mq.nameServerAddress(), prefix, group).start();
    try {
      assertThat(child.awaitExit(Duration.ofSeconds(90))).as("halted; output:%n%s", child.output())
          .isEqualTo(ChildJvm.HALTED);
      assertThat(child.output()).contains("halted at " + point);
    } finally {
      child.close();
    }
    List<AutoCloseable> open = new ArrayList<>();
    try {
      // the survivor: the child's producer group (it answers the check-backs of the child's half messages)
      TxnProducer producer = TxnProducer.builder().group(group).dataSource(ds)
          .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics(topics.toArray(String[]::new)).build();
      open.add(producer);
      OrderSaga saga = new OrderSaga(ds, producer, prefix, null, b -> b.pollInterval(Duration.ofMillis(200)));
      open.add(saga.coordinator);
      if (point == CrashPoints.Point.AFTER_DB_COMMIT) {
        assertThat(saga.events(id)).as("the transition committed").endsWith("REPLIED reserve 1", "SENT debit 1");
      } else {
        assertThat(saga.events(id)).as("the transition did not commit").endsWith("SENT reserve 1");
      }
      for (String p : List.of("inventory", "account", "shipping")) { // the saga completes: no compensation topic
        consume(mq, prefix + p + "-cmd", saga.participants.get(prefix + p + "-cmd"), open);
      }
      if (point == CrashPoints.Point.AFTER_DB_COMMIT) {
        // no coordinator runs yet: only the check-back can have committed the debit command's half message
        await().atMost(Duration.ofSeconds(30)).until(() -> saga.effects(id).contains("debit forward"));
      }
      consume(mq, prefix + OrderSaga.REPLIES, saga.coordinator.replyHandler(), open);
      saga.coordinator.startPolling();
      await().atMost(Duration.ofSeconds(60)).until(() -> "COMPLETED".equals(saga.state(id)));
      assertThat(saga.effects(id)).containsExactly("reserve forward", "debit forward", "ship forward",
          "mark-paid forward");
      assertThat(saga.events(id)).containsOnlyOnce("REPLIED reserve 1", "SENT debit 1", "COMPLETED");
    } finally {
      for (int i = open.size() - 1; i >= 0; i--) {
        open.get(i).close();
      }
    }
  }

  private static void consume(EmbeddedRocketMQ mq, String topic, IdempotentHandler handler,
      List<AutoCloseable> open) {
    open.add(RocketMQIdempotentConsumer.builder().nameServer(mq.nameServerAddress()).topic(topic)
        .group(RocketMQExtension.uniqueTopic("g")).handler(handler).start());
  }
}
