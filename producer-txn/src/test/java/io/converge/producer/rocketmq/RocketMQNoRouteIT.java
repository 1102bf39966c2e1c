package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.ConvergeException;
import io.converge.producer.InvalidMessageException;
import io.converge.producer.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.schema.Migrations;
import java.sql.PreparedStatement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * "No route info" for a topic the producer has not used yet means two different things (issue 13.14,
 * issue 19): with brokers registered, the topic does not exist (a refusal of the message); with no
 * broker registered, RocketMQ is down (an outage, which a caller waits out).
 */
@ExtendWith(RocketMQExtension.class)
class RocketMQNoRouteIT {

  private static DataSource db;

  @BeforeAll
  static void schema() throws Exception {
    db = ConvergePostgres.shared().newSchema("rmqnoroute");
    Migrations.apply(db, "producer");
    try (var c = db.getConnection(); var s = c.createStatement()) {
      s.execute("CREATE TABLE orders (id text PRIMARY KEY)");
    }
  }

  @Test
  void aNewTopicDuringAnOutageIsBrokerUnavailable() throws Exception {
    // a cluster of this test's own: its broker is stopped, so the name server has no broker registered
    try (EmbeddedRocketMQ down = EmbeddedRocketMQ.builder().build().start()) {
      String topic = RocketMQExtension.uniqueTopic("outage");
      down.createTopic(topic);
      down.stopBroker();
      try (TxnProducer p = producer(down)) {
        String id = MessageIds.shared().next();
        assertThatThrownBy(() -> publish(p, topic, id)).isInstanceOf(BrokerUnavailableException.class)
            .satisfies(e -> assertThat(((ConvergeException) e).messageId()).isEqualTo(id));
        assertThat(orderExists(id)).isFalse();
      }
      // a declared topic whose route cannot be fetched at build: the same rule, an outage
      assertThatThrownBy(() -> TxnProducer.builder().group(RocketMQExtension.uniqueTopic("g")).dataSource(db)
          .backend(RocketMQBackend.nameServer(down.nameServerAddress())).topics(topic).build())
          .isInstanceOf(BrokerUnavailableException.class).hasMessageContaining(topic);
    }
  }

  @Test
  void aTopicThatDoesNotExistWhileBrokersAreUpIsAnInvalidMessage(EmbeddedRocketMQ mq) throws Exception {
    assertThat(mq.settings().autoCreateTopics()).as("the embedded broker must not create topics").isFalse();
    String missing = RocketMQExtension.uniqueTopic("missing");
    try (TxnProducer p = producer(mq)) {
      String id = MessageIds.shared().next();
      assertThatThrownBy(() -> publish(p, missing, id)).isInstanceOf(InvalidMessageException.class)
          .hasMessageContaining(missing)
          .hasMessageContaining("Topic " + missing + " is unknown to the RocketMQ name server") // the sink's words too
          .satisfies(e -> assertThat(((ConvergeException) e).messageId()).isEqualTo(id));
      assertThat(orderExists(id)).isFalse();
    }
  }

  private static TxnProducer producer(EmbeddedRocketMQ mq) {
    return TxnProducer.builder().group(RocketMQExtension.uniqueTopic("g")).dataSource(db)
        .backend(RocketMQBackend.nameServer(mq.nameServerAddress()).sendTimeout(Duration.ofSeconds(2))).build();
  }

  private static void publish(TxnProducer p, String topic, String id) throws Exception {
    p.inTransaction(tx -> {
      try (PreparedStatement ps = tx.connection().prepareStatement("INSERT INTO orders VALUES (?)")) {
        ps.setString(1, id);
        ps.executeUpdate();
      }
      return tx.publish(OutgoingMessage.builder(topic).id(id).payload("no-route".getBytes(UTF_8)).build());
    });
  }

  private static boolean orderExists(String id) throws Exception {
    try (var c = db.getConnection(); var s = c.prepareStatement("SELECT count(*) FROM orders WHERE id = ?")) {
      s.setString(1, id);
      try (var rs = s.executeQuery()) {
        rs.next();
        return rs.getInt(1) == 1;
      }
    }
  }
}
