package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.RocketMQExtension;
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
}
