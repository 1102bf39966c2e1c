package io.converge.consumer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.producer.Envelope;
import io.converge.producer.schema.Migrations;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A consumer process killed after its transaction committed and before the ack: one effect. */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class, ChildJvmExtension.class})
class ConsumerKillIT {

  @Test
  void killedAfterCommitBeforeAckIsRedeliveredAndAbsorbed(EmbeddedRocketMQ mq, ConvergePostgres pg, ChildJvms jvms)
      throws Exception {
    DataSource db = pg.newSchema("consumerkill");
    Migrations.apply(db, "consumer");
    String schema;
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_schema()")) {
      rs.next();
      schema = rs.getString(1);
      s.execute("CREATE TABLE kill_ledger (id bigserial PRIMARY KEY, message_id text NOT NULL)");
    }
    String topic = RocketMQExtension.uniqueTopic("kill");
    String group = RocketMQExtension.uniqueTopic("killgroup");
    mq.createTopic(topic);

    ChildJvm child = jvms.launch(KilledConsumerMain.class).database(pg.jdbcUrl(), pg.user(), pg.password(), schema)
        .property(KilledConsumerMain.GROUP, group).property(KilledConsumerMain.TOPIC, topic)
        .property(KilledConsumerMain.NAME_SERVER, mq.nameServerAddress()).start();
    child.awaitLine(KilledConsumerMain.READY, Duration.ofSeconds(60));

    String id = UUID.randomUUID().toString();
    DefaultMQProducer producer = new DefaultMQProducer(RocketMQExtension.uniqueTopic("killp"));
    producer.setNamesrvAddr(mq.nameServerAddress());
    producer.start();
    try {
      // a new group's first rebalance starts at the queues' last offsets: probes until one is consumed
      await("the child consumes").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
        send(producer, topic, KilledConsumerMain.PROBE + UUID.randomUUID());
        return child.output().contains(KilledConsumerMain.PROBED);
      });
      send(producer, topic, id);
    } finally {
      producer.shutdown();
    }
    int exit = child.awaitExit(Duration.ofSeconds(90)); // fails with the output when the child did not exit
    assertThat(exit).as(child.output()).isEqualTo(ChildJvm.HALTED);
    assertThat(child.output()).contains(KilledConsumerMain.COMMITTED + id + " PROCESSED");
    assertThat(effects(db, id)).isEqualTo(1);

    // a new instance of the group: the broker redelivers the unacked message, the claim absorbs it
    List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    IdempotentHandler real = IdempotentHandler.builder().group(group).dataSource(db).handler((c, msg) -> {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO kill_ledger (message_id) VALUES (?)")) {
        ps.setString(1, msg.envelopeMessageId());
        ps.executeUpdate();
      }
    }).build();
    IdempotentHandler recording = new IdempotentHandler() {

      @Override
      public Outcome handle(IncomingMessage message) {
        Outcome o = real.handle(message);
        if (id.equals(message.envelopeMessageId())) {
          outcomes.add(o);
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
    try (RocketMQIdempotentConsumer heir = RocketMQIdempotentConsumer.builder().nameServer(mq.nameServerAddress())
        .topic(topic).handler(recording).start()) {
      await().atMost(Duration.ofSeconds(90)).until(() -> !outcomes.isEmpty());
    }
    assertThat(outcomes).containsOnly(Outcome.DUPLICATE);
    assertThat(effects(db, id)).isEqualTo(1);
  }

  private static void send(DefaultMQProducer producer, String topic, String id) throws Exception {
    Message m = new Message(topic, "*", "order-1", "{}".getBytes(StandardCharsets.UTF_8));
    m.putUserProperty(Envelope.MESSAGE_ID, id);
    producer.send(m);
  }

  private static int effects(DataSource db, String id) throws Exception {
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM kill_ledger WHERE message_id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
