package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.TxnProducer;
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
@ExtendWith(RocketMQExtension.class)
class PoisonKeyIT {

  @Test
  void poisonKeyIsParkedWhileOtherKeysFlow(EmbeddedRocketMQ mq) throws Exception {
    DataSource ds = RelayFixture.newOutbox();
    String topic = RocketMQExtension.uniqueTopic("poison");
    mq.createTopic(topic);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = RelayFixture.producer(ds);
        OutboxRelay relay = RelayFixture.relay(ds, RelayFixture.sink(mq).maxMessageBytes(64 * 1024).build())
            .maxAttempts(3).retryBase(Duration.ofMillis(100)).metricsInterval(Duration.ofMillis(200))
            .metrics(MicrometerRelayMetrics.of(registry)).build()) {
      String poison = RelayFixture.publish(p, topic, "poison", new byte[100 * 1024]);
      String afterPoison = RelayFixture.publish(p, topic, "poison");
      relay.start();
      List<String> others = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        others.add(RelayFixture.publish(p, topic, "healthy-" + (i % 6)));
        Thread.sleep(20);
      }
      deliveries.awaitAll(others, Duration.ofSeconds(60));

      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (Outbox.on(ds).parkedCount() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      List<Outbox.Parked> parked = Outbox.on(ds).parked(10);
      assertThat(parked).singleElement().satisfies(row -> {
        assertThat(row.messageId()).isEqualTo(poison);
        assertThat(row.key()).isEqualTo("poison");
        assertThat(row.attempts()).isEqualTo(3);
        assertThat(row.reason()).contains("InvalidMessageException");
        assertThat(row.parkedAt()).isNotNull();
      });
      Thread.sleep(500);
      assertThat(deliveries.ids()).as("a parked key keeps its order: nothing after the poison is sent")
          .doesNotContain(poison, afterPoison);
      assertThat(RelayFixture.count(ds, "message_id = '" + poison + "' AND attempts = 3")).isOne();

      // left: the parked row and the row behind it; neither is lag (the relays are not late, the key is parked)
      deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (!Outbox.on(ds).lag().isZero() && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(Outbox.on(ds).lag()).as("rows of a parked key are not lag").isZero();
      Thread.sleep(400); // a metrics read
      assertThat(registry.get("outbox.parked").gauge().value()).isEqualTo(1.0);
      assertThat(registry.get("outbox.parked.total").counter().count()).isEqualTo(1.0);
      assertThat(registry.get("outbox.published").counter().count()).isGreaterThanOrEqualTo(others.size());
      assertThat(registry.get("outbox.lag").gauge().value()).as("parked rows are not lag").isZero();

      // resume: the row is retried from scratch (and, still too large, parked again after 3 attempts)
      assertThat(Outbox.on(ds).resume("poison")).isOne();
      assertThat(Outbox.on(ds).parkedCount()).isZero();
      deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (Outbox.on(ds).parkedCount() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(Outbox.on(ds).parked(10)).singleElement().satisfies(row -> assertThat(row.attempts()).isEqualTo(3));
    }
  }
}
