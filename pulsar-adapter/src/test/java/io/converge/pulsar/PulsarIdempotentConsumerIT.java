package io.converge.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.MessageHandler;
import io.converge.testing.ConsumerBindingContract;
import io.converge.core.Envelope;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Pulsar binding on the embedded Pulsar and PostgreSQL: real redeliveries, real duplicates. The guarantees
 * shared with the RocketMQ binding are the {@link ConsumerBindingContract}'s; this class adds the
 * Pulsar-specific ones.
 */
@ExtendWith(PulsarExtension.class)
class PulsarIdempotentConsumerIT extends ConsumerBindingContract {

  private final EmbeddedPulsar pulsar;

  PulsarIdempotentConsumerIT(EmbeddedPulsar pulsar) {
    this.pulsar = pulsar;
  }

  @Override
  protected String newTopic(String prefix) {
    return PulsarExtension.uniqueTopic(prefix);
  }

  /**
   * Key_Shared consumers built from the service URL (the binding owns that client); the subscription is the
   * handler's group.
   */
  @Override
  protected AutoCloseable start(String topic, IdempotentHandler handler, int instances) {
    PulsarIdempotentConsumer consumer = PulsarIdempotentConsumer.builder().serviceUrl(pulsar.serviceUrl())
        .topic(topic).handler(handler).redeliveryDelay(Duration.ofMillis(200)).releaseInterval(Duration.ofMillis(200))
        .consumers(instances).start();
    assertThat(consumer.subscription()).startsWith(handler.group());
    return consumer;
  }

  @Override
  protected void send(String topic, String messageId, String tenant, String key, String body) throws Exception {
    send(topic, messageId, tenant, key, key, body);
  }

  /** {@code routeAs} is the ordering key: Key_Shared hands the message to the consumer of that key. */
  @Override
  protected void send(String topic, String messageId, String tenant, String key, String routeAs, String body)
      throws Exception {
    PulsarSinkITSupport.producer(pulsar, topic).newMessage().key(key)
        .orderingKey(routeAs.getBytes(StandardCharsets.UTF_8))
        .properties(Map.of(Envelope.MESSAGE_ID, messageId, Envelope.TENANT, tenant))
        .value(body.getBytes(StandardCharsets.UTF_8)).send();
  }

  @Override
  protected int concurrentInstances() {
    return 4;
  }

  @Test
  void databaseDownIsWaitedOutWithoutARedeliveryOrAnAttempt() throws Exception {
    String topic = PulsarExtension.uniqueTopic("nack");
    AtomicInteger failuresLeft = new AtomicInteger(2); // the claim's transaction and the failure record
    DataSource flaky = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[]{DataSource.class},
        (proxy, method, args) -> {
          if (method.getName().equals("getConnection") && failuresLeft.getAndDecrement() > 0) {
            throw new SQLException("connection refused (test: database down)", "08001");
          }
          return method.invoke(ds, args);
        });
    List<Integer> deliveryCounts = new CopyOnWriteArrayList<>();
    MessageHandler counting = (c, m) -> {
      deliveryCounts.add(m.deliveryCount());
      RECORD.handle(c, m);
    };
    String id = UUID.randomUUID().toString();
    try (PulsarIdempotentConsumer consumer = PulsarIdempotentConsumer.builder()
        .client(PulsarSinkITSupport.client(pulsar)).topic(topic)
        .handler(IdempotentHandler.builder().group("nack-" + UUID.randomUUID()).dataSource(flaky).handler(counting)
            .policy(FailurePolicy.defaults().withMaxAttempts(1)).build())
        .redeliveryDelay(Duration.ofMillis(200)).consumers(1).start()) {
      send(topic, id, "acme", "k", "1");
      await().atMost(Duration.ofSeconds(30)).until(() -> effects(id) == 1);
      assertThat(failuresLeft.get()).isNegative();
      // an outage is waited out in the same delivery (issue 19.1): the handler ran once, without a
      // redelivery and without a counted attempt (maxAttempts 1 would otherwise have parked it)
      assertThat(deliveryCounts).containsExactly(1);
      assertThat(effects(id)).isEqualTo(1);
    }
  }

  @Test
  void invalidSettingsAreNamed() {
    IdempotentHandler h = handler("x", RECORD).build();
    org.assertj.core.api.Assertions
        .assertThatThrownBy(() -> PulsarIdempotentConsumer.builder().handler(h).topic("t").start())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("serviceUrl");
    org.assertj.core.api.Assertions
        .assertThatThrownBy(
            () -> PulsarIdempotentConsumer.builder().client(PulsarSinkITSupport.client(pulsar)).handler(h).topic("t")
                .consumers(0).start())
        .hasMessageContaining("pulsar.consumers must be between 1 and 64, but was 0");
    org.assertj.core.api.Assertions
        .assertThatThrownBy(
            () -> PulsarIdempotentConsumer.builder().client(PulsarSinkITSupport.client(pulsar)).handler(h).topic("t")
                .receiverQueueSize(0).start())
        .hasMessageContaining("pulsar.receiverQueueSize must be between 1 and 10000, but was 0");
  }
}
