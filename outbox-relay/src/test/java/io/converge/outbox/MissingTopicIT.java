package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.TxnProducer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A row for a topic that does not exist (the embedded broker does not create topics on first send):
 * RocketMQ answers "No route info", which is a refusal of that record, not an outage. The row counts
 * attempts and is parked after maxAttempts with its reason; another key on an existing topic keeps
 * flowing. (That a real outage counts no attempt and parks nothing is {@link BrokerOutageIT}.)
 */
@ExtendWith(RocketMQExtension.class)
class MissingTopicIT {

  @Test
  void rowForMissingTopicIsParkedWithItsReasonWhileOtherKeysFlow(EmbeddedRocketMQ mq) throws Exception {
    assertThat(mq.settings().autoCreateTopics()).as("the embedded broker must not create topics").isFalse();
    DataSource ds = RelayFixture.newOutbox();
    String topic = RocketMQExtension.uniqueTopic("exists");
    String missing = RocketMQExtension.uniqueTopic("missing");
    mq.createTopic(topic);
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = RelayFixture.producer(ds);
        OutboxRelay relay = RelayFixture.relay(ds, RelayFixture.sink(mq).build()).maxAttempts(3)
            .retryBase(Duration.ofMillis(100)).build()) {
      String lost = RelayFixture.publish(p, missing, "orphan");
      String behind = RelayFixture.publish(p, missing, "orphan");
      relay.start();
      List<String> others = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        others.add(RelayFixture.publish(p, topic, "healthy-" + (i % 3)));
      }
      deliveries.awaitAll(others, Duration.ofSeconds(60));
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (Outbox.on(ds).parkedCount() == 0) {
        assertThat(System.nanoTime()).as("the row of the missing topic is parked within 60 s; rows now: attempts=%d",
            RelayFixture.count(ds, "message_id = '" + lost + "' AND attempts > 0")).isLessThan(deadline);
        Thread.sleep(50);
      }
      assertThat(Outbox.on(ds).parked(10)).singleElement().satisfies(row -> {
        assertThat(row.messageId()).isEqualTo(lost);
        assertThat(row.key()).isEqualTo("orphan");
        assertThat(row.attempts()).isEqualTo(3);
        assertThat(row.reason()).contains("InvalidMessageException").contains(missing);
      });
      assertThat(RelayFixture.count(ds, "message_id = '" + behind + "' AND published_at IS NULL")).as("the key waits").isOne();
      String later = RelayFixture.publish(p, topic, "healthy-0");
      deliveries.awaitAll(List.of(later), Duration.ofSeconds(30));
    }
  }
}
