package io.converge.consumer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.Outcome;
import io.converge.core.Envelope;
import io.converge.core.Migrations;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A consumer process killed after its transaction committed and before the ack: one effect. */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class, ChildJvmExtension.class})
class ConsumerKillIT {

  @RegisterExtension
  static final RawRocketMQ mq = new RawRocketMQ();

  @Test
  void killedAfterCommitBeforeAckIsRedeliveredAndAbsorbed(ConvergePostgres pg, ChildJvms jvms) throws Exception {
    DataSource db = pg.newSchema("consumerkill");
    Migrations.apply(db, "consumer");
    String schema = KillLedger.create(db);
    String topic = mq.newTopic("kill");
    String group = RocketMQExtension.uniqueTopic("killgroup");

    ChildJvm child = jvms.launch(KilledConsumerMain.class).database(pg.jdbcUrl(), pg.user(), pg.password(), schema)
        .property(KilledConsumerMain.GROUP, group).property(KilledConsumerMain.TOPIC, topic)
        .property(KilledConsumerMain.NAME_SERVER, mq.nameServer()).start();
    child.awaitLine(KilledConsumerMain.READY, Duration.ofSeconds(60));

    String id = UUID.randomUUID().toString();
    // a new group's first rebalance starts at the queues' last offsets: probes until one is consumed
    await("the child consumes").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
      send(topic, KilledConsumerMain.PROBE + UUID.randomUUID());
      return child.output().contains(KilledConsumerMain.PROBED);
    });
    send(topic, id);
    int exit = child.awaitExit(Duration.ofSeconds(90)); // fails with the output when the child did not exit
    assertThat(exit).as(child.output()).isEqualTo(ChildJvm.HALTED);
    assertThat(child.output()).contains(KilledConsumerMain.COMMITTED + id + " PROCESSED");
    assertThat(KillLedger.effects(db, id)).isEqualTo(1);

    // a new instance of the group: the broker redelivers the unacked message, the claim absorbs it
    List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    IdempotentHandler recording = KillLedger.handler(group, db, (real, message) -> {
      Outcome o = real.handle(message);
      if (id.equals(message.envelopeMessageId())) {
        outcomes.add(o);
      }
      return o;
    });
    try (RocketMQIdempotentConsumer heir = RocketMQIdempotentConsumer.builder().nameServer(mq.nameServer())
        .topic(topic).handler(recording).start()) {
      await().atMost(Duration.ofSeconds(90)).until(() -> !outcomes.isEmpty());
    }
    assertThat(outcomes).containsOnly(Outcome.DUPLICATE);
    assertThat(KillLedger.effects(db, id)).isEqualTo(1);
  }

  private static void send(String topic, String id) throws Exception {
    Message m = new Message(topic, "*", "order-1", "{}".getBytes(StandardCharsets.UTF_8));
    m.putUserProperty(Envelope.MESSAGE_ID, id);
    mq.send(m);
  }
}
