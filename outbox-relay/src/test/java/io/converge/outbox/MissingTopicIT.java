package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.RocketMQExtension;
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
@ExtendWith({RocketMQExtension.class, RelayBed.Extension.class})
class MissingTopicIT {

  @Test
  void rowForMissingTopicIsParkedWithItsReasonWhileOtherKeysFlow(RelayBed bed) throws Exception {
    assertThat(bed.mq.settings().autoCreateTopics()).as("the embedded broker must not create topics").isFalse();
    DataSource ds = bed.ds;
    String missing = RocketMQExtension.uniqueTopic("missing");
    try (OutboxRelay relay = bed.relay(bed.sink().build()).maxAttempts(3).retryBase(Duration.ofMillis(100)).build()) {
      String lost = RelayFixture.publish(bed.producer, missing, "orphan");
      String behind = RelayFixture.publish(bed.producer, missing, "orphan");
      relay.start();
      List<String> others = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        others.add(bed.publish("healthy-" + (i % 3)));
      }
      bed.deliveries.awaitAll(others, Duration.ofSeconds(60));
      await("the row of the missing topic is parked within 60 s").atMost(Duration.ofSeconds(60))
          .until(() -> Outbox.on(ds).parkedCount() > 0);
      assertThat(Outbox.on(ds).parked(10)).singleElement().satisfies(row -> {
        assertThat(row.messageId()).isEqualTo(lost);
        assertThat(row.key()).isEqualTo("orphan");
        assertThat(row.attempts()).isEqualTo(3);
        assertThat(row.reason()).contains("InvalidMessageException").contains(missing);
      });
      assertThat(RelayFixture.count(ds, "message_id = '" + behind + "' AND published_at IS NULL")).as("the key waits")
          .isOne();
      String later = bed.publish("healthy-0");
      bed.deliveries.awaitAll(List.of(later), Duration.ofSeconds(30));
    }
  }
}
