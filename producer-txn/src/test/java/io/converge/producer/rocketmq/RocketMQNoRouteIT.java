package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import io.converge.core.InvalidMessageException;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.testing.StoppedRocketMQ;
import java.time.Duration;
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

  private static OrdersTable orders;

  @BeforeAll
  static void schema() throws Exception {
    orders = OrdersTable.create("rmqnoroute");
  }

  @Test
  void aNewTopicDuringAnOutageIsBrokerUnavailable() throws Exception {
    try (StoppedRocketMQ down = StoppedRocketMQ.withTopic("outage")) {
      String topic = down.topic();
      try (TxnProducer p = producer(down.mq())) {
        String id = MessageIds.shared().next();
        assertThatThrownBy(() -> publish(p, topic, id)).isInstanceOf(BrokerUnavailableException.class)
            .satisfies(e -> assertThat(((ConvergeException) e).messageId()).isEqualTo(id));
        assertThat(orderExists(id)).isFalse();
      }
      // a declared topic whose route cannot be fetched at build: the same rule, an outage
      assertThatThrownBy(() -> TxnProducer.builder().group(RocketMQExtension.uniqueTopic("g")).dataSource(orders.db())
          .backend(RocketMQBackend.nameServer(down.mq().nameServerAddress())).topics(topic).build())
          .isInstanceOf(BrokerUnavailableException.class).hasMessageContaining(topic);
    }
  }

  @Test
  void aTopicThatDoesNotExistWhileBrokersAreUpIsAnInvalidMessage(EmbeddedRocketMQ mq) throws Exception {
    assertThat(mq.settings().autoCreateTopics()).as("the embedded broker must not create topics").isFalse();
    // the broker's first registration may still be under way when this class runs first in its JVM
    mq.createTopic(RocketMQExtension.uniqueTopic("registered"));
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
    return TxnProducer.builder().group(RocketMQExtension.uniqueTopic("g")).dataSource(orders.db())
        .backend(RocketMQBackend.nameServer(mq.nameServerAddress()).sendTimeout(Duration.ofSeconds(2))).build();
  }

  private static void publish(TxnProducer p, String topic, String id) throws Exception {
    p.inTransaction(tx -> {
      OrdersTable.insert(tx.connection(), id);
      return tx.publish(OutgoingMessage.builder(topic).id(id).payload("no-route".getBytes(UTF_8)).build());
    });
  }

  private static boolean orderExists(String id) throws Exception {
    return orders.count(id) == 1;
  }
}
