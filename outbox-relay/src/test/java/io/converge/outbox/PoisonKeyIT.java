package io.converge.outbox;

import io.converge.outbox.micrometer.MicrometerRelayMetrics;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.OutgoingMessage;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A message the broker refuses (a body over the client's size limit: a real refusal, no fake) is
 * retried with backoff, then its key is parked after maxAttempts: the key's later messages wait (order),
 * every other key keeps flowing, the parked row is visible with its reason and counted in the metrics,
 * and {@link Outbox#resume} puts it back in play.
 */
@ExtendWith({RocketMQExtension.class, RelayBed.Extension.class})
class PoisonKeyIT {

  @Test
  void poisonKeyIsParkedWhileOtherKeysFlow(RelayBed bed) throws Exception {
    DataSource ds = bed.ds;
    Deliveries deliveries = bed.deliveries;
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (OutboxRelay relay = bed.relay(bed.sink().maxMessageBytes(64 * 1024).build())
        .maxAttempts(3).retryBase(Duration.ofMillis(100)).metricsInterval(Duration.ofMillis(200))
        .metrics(MicrometerRelayMetrics.of(registry)).build()) {
      String poison = bed.publish("poison", new byte[100 * 1024]);
      String afterPoison = bed.publish("poison");
      relay.start();
      List<String> others = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        others.add(bed.publish("healthy-" + (i % 6))); // one by one: the poison key is retried meanwhile
      }
      deliveries.awaitAll(others, Duration.ofSeconds(60));

      await().atMost(Duration.ofSeconds(30)).until(() -> Outbox.on(ds).parkedCount() > 0);
      List<Outbox.Parked> parked = Outbox.on(ds).parked(10);
      assertThat(parked).singleElement().satisfies(row -> {
        assertThat(row.messageId()).isEqualTo(poison);
        assertThat(row.key()).isEqualTo("poison");
        assertThat(row.attempts()).isEqualTo(3);
        assertThat(row.reason()).contains("InvalidMessageException");
        assertThat(row.parkedAt()).isNotNull();
      });
      deliveries.awaitNoneFor(Duration.ofMillis(500), List.of(poison, afterPoison));
      assertThat(deliveries.ids()).as("a parked key keeps its order: nothing after the poison is sent")
          .doesNotContain(poison, afterPoison);
      assertThat(RelayFixture.count(ds, "message_id = '" + poison + "' AND attempts = 3")).isOne();

      // left: the parked row and the row behind it; neither is lag (the relays are not late, the key is parked)
      await().atMost(Duration.ofSeconds(10)).until(() -> Outbox.on(ds).lag().isZero());
      assertThat(Outbox.on(ds).lag()).as("rows of a parked key are not lag").isZero();
      // the next metrics reads (every 200 ms) see the parked row and no lag
      await().atMost(Duration.ofSeconds(10)).until(() -> registry.get("outbox.parked").gauge().value() == 1.0
          && registry.get("outbox.lag").gauge().value() == 0.0);
      assertThat(registry.get("outbox.parked").gauge().value()).isEqualTo(1.0);
      assertThat(registry.get("outbox.parked.total").counter().count()).isEqualTo(1.0);
      assertThat(registry.get("outbox.published").counter().count()).isGreaterThanOrEqualTo(others.size());
      assertThat(registry.get("outbox.lag").gauge().value()).as("parked rows are not lag").isZero();

      // resume: the row is retried from scratch (and, still too large, parked again after 3 attempts)
      assertThat(Outbox.on(ds).resume("poison")).isOne();
      assertThat(Outbox.on(ds).parkedCount()).isZero();
      await().atMost(Duration.ofSeconds(30)).until(() -> Outbox.on(ds).parkedCount() > 0);
      assertThat(Outbox.on(ds).parked(10)).singleElement().satisfies(row -> assertThat(row.attempts()).isEqualTo(3));
    }
  }

  /**
   * A key's line is (tenant, topic, key), as in the consumer's hold: a parked row of tenant t1 holds t1's
   * later rows of its key on its topic, not t2's rows of the same key, nor t1's rows of that key on
   * another topic; a resume names the line when the key is parked on more than one.
   */
  @Test
  void aParkedKeyHoldsOnlyItsOwnTenantAndTopic(RelayBed bed) throws Exception {
    DataSource ds = bed.ds;
    String other = RocketMQExtension.uniqueTopic("line");
    bed.mq.createTopic(other);
    try (Deliveries onOther = bed.closeLater(new Deliveries(bed.mq, other))) {
      String p1 = park(bed, publish(bed, "t1", bed.topic));
      String p2 = park(bed, publish(bed, "t2", other));
      String behindP1 = publish(bed, "t1", bed.topic);
      String otherTenant = publish(bed, "t2", bed.topic);
      String otherTopic = publish(bed, "t1", other);
      Thread.sleep(20);
      assertThat(Outbox.on(ds).lag()).as("rows of other lines of the key are lag, not held").isPositive();

      try (OutboxRelay relay = bed.relay(bed.sink().build()).build()) {
        relay.start();
        bed.deliveries.awaitAll(List.of(otherTenant), Duration.ofSeconds(30));
        onOther.awaitAll(List.of(otherTopic), Duration.ofSeconds(30));
        bed.deliveries.awaitNoneFor(Duration.ofMillis(300), List.of(p1, behindP1));

        assertThatThrownBy(() -> Outbox.on(ds).resume("1001")).isInstanceOf(AmbiguousKeyException.class)
            .hasMessageContaining("tenant 't1', topic '" + bed.topic + "'")
            .hasMessageContaining("tenant 't2', topic '" + other + "'");
        assertThat(Outbox.on(ds).parkedCount()).as("an ambiguous resume resumes nothing").isEqualTo(2);
        assertThat(Outbox.on(ds).resume("t1", null, "1001")).isOne();
        bed.deliveries.awaitAll(List.of(p1, behindP1), Duration.ofSeconds(30));
        // the broker's order: one queue, p1 at the lower offset (the recording consumer is concurrent, so the order
        // in which its threads record two messages of one queue is not the broker's)
        List<org.apache.rocketmq.common.message.MessageExt> line = bed.deliveries.raw().stream()
            .filter(
                m -> List.of(p1, behindP1).contains(m.getUserProperty(io.converge.core.Envelope.MESSAGE_ID)))
            .sorted(java.util.Comparator.comparingLong(org.apache.rocketmq.common.message.MessageExt::getQueueOffset))
            .toList();
        assertThat(line).extracting(org.apache.rocketmq.common.message.MessageExt::getQueueId).containsOnly(
            line.get(0).getQueueId());
        assertThat(line).extracting(m -> m.getUserProperty(io.converge.core.Envelope.MESSAGE_ID))
            .containsExactly(p1, behindP1);
        assertThat(Outbox.on(ds).parked(10)).singleElement().satisfies(row -> {
          assertThat(row.messageId()).isEqualTo(p2);
          assertThat(row.tenant()).isEqualTo("t2");
        });
      }
    }
  }

  private static String publish(RelayBed bed, String tenant, String topic) {
    return bed.producer.inTransaction(tx -> tx.publish(
        OutgoingMessage.builder(topic).tenant(tenant).key("1001").payload(tenant.getBytes(UTF_8)).build()));
  }

  /** Parks the row of {@code messageId} as the relay does after its last refused attempt. */
  private static String park(RelayBed bed, String messageId) throws Exception {
    RelayFixture.execute(bed.ds, "UPDATE converge_outbox SET attempts = 5, last_error = 'refused', parked_at = now()"
        + " WHERE message_id = '" + messageId + "'");
    return messageId;
  }
}
