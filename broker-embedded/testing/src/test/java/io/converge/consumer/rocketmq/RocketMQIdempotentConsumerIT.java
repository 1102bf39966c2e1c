package io.converge.consumer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.BusinessException;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.Outcome;
import io.converge.testing.ConsumerBindingContract;
import io.converge.core.Envelope;
import io.converge.core.rocketmq.KeyQueueSelector;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The RocketMQ binding on the real embedded broker and PostgreSQL: redeliveries really go through the broker.
 * The guarantees shared with the Pulsar binding are the {@link ConsumerBindingContract}'s; this class adds
 * the RocketMQ-specific ones.
 */
@ExtendWith(RocketMQExtension.class)
class RocketMQIdempotentConsumerIT extends ConsumerBindingContract {

  private static final String PROBE = "probe-";

  @RegisterExtension
  static final RawRocketMQ mq = new RawRocketMQ();

  @Override
  protected String newTopic(String prefix) {
    return mq.newTopic(prefix);
  }

  @Override
  protected void send(String topic, String messageId, String tenant, String key, String body) throws Exception {
    send(topic, messageId, tenant, key, key, body);
  }

  @Override
  protected void send(String topic, String messageId, String tenant, String key, String routeAs, String body)
      throws Exception {
    Message m = new Message(topic, "*", key, body.getBytes(StandardCharsets.UTF_8));
    if (messageId != null) {
      m.putUserProperty(Envelope.MESSAGE_ID, messageId);
    }
    m.putUserProperty(Envelope.TENANT, tenant);
    // one key, one queue (Converge's producers select the queue the same way); routeAs is that key
    assertThat(mq.send(m, KeyQueueSelector.BY_KEY, routeAs).getSendStatus()).isEqualTo(SendStatus.SEND_OK);
  }

  /**
   * Several instances: each one's handler acks probe messages (id {@value #PROBE}...) without running the
   * handler; returns once every instance took queues in the rebalance, i.e. consumed a probe.
   */
  @Override
  protected AutoCloseable start(String topic, IdempotentHandler handler, int instances) throws Exception {
    if (instances == 1) {
      return consume(topic, handler);
    }
    Set<String> probed = ConcurrentHashMap.newKeySet();
    List<RocketMQIdempotentConsumer> started = new ArrayList<>();
    AutoCloseable all = () -> {
      for (RocketMQIdempotentConsumer c : started) {
        c.close();
      }
    };
    try {
      for (int i = 0; i < instances; i++) {
        started.add(consume(topic, probing("i" + i, probed, handler)));
      }
      // every instance took queues in the rebalance once each consumed a probe (spread over the queues)
      await("every instance consumes").atMost(WAIT).pollInterval(Duration.ofMillis(200)).until(() -> {
        send(topic, PROBE + UUID.randomUUID(), "acme", "probe-" + UUID.randomUUID(), "{}");
        return probed.size() == instances;
      });
      return all;
    } catch (Exception | Error e) {
      all.close();
      throw e;
    }
  }

  @Override
  protected int concurrentInstances() {
    return 2;
  }

  private RocketMQIdempotentConsumer consume(String topic, IdempotentHandler h) {
    return RocketMQIdempotentConsumer.builder().nameServer(mq.nameServer()).topic(topic).handler(h)
        .consumeThreads(8).suspendTime(Duration.ofMillis(100)).releaseInterval(Duration.ofMillis(200)).start();
  }

  /** Records that instance {@code name} consumed a probe message and acks it; passes every other one to {@code h}. */
  private static IdempotentHandler probing(String name, Set<String> probed, IdempotentHandler h) {
    return around(h, message -> {
      if (message.envelopeMessageId() != null && message.envelopeMessageId().startsWith(PROBE)) {
        probed.add(name);
        return Outcome.PROCESSED;
      }
      return h.handle(message);
    });
  }

  @Test
  void businessFailureIsNotRetriedAndNotRerunOnRedelivery() throws Exception {
    String topic = newTopic("biz");
    String group = RocketMQExtension.uniqueTopic("biz");
    AtomicInteger runs = new AtomicInteger();
    Map<Outcome, AtomicInteger> seen = new ConcurrentHashMap<>();
    IdempotentHandler h = handler(group, (c, m) -> {
      runs.incrementAndGet();
      RECORD.handle(c, m);
      throw new BusinessException("RISK_REJECTED", "risk score 97");
    }).build();
    String id = UUID.randomUUID().toString();
    try (AutoCloseable consumer = start(topic, counting(h, seen), 1)) {
      send(topic, id, "acme", "order-3", "{}");
      await().atMost(WAIT).until(() -> seen.values().stream().mapToInt(AtomicInteger::get).sum() >= 1);
      // a redelivery after the refusal was recorded (a concurrent copy may run the handler itself: its
      // transaction rolls back as a whole and the claim decides, see IdempotentHandlerIT)
      send(topic, id, "acme", "order-3", "{}");
      await().atMost(WAIT).until(() -> seen.values().stream().mapToInt(AtomicInteger::get).sum() >= 2);
    }
    assertThat(runs).hasValue(1);
    assertThat(effects(id)).isZero();
    assertThat(seen.get(Outcome.BUSINESS_FAILURE)).hasValue(1);
    assertThat(seen.get(Outcome.DUPLICATE)).hasValue(1);
    assertThat(string("SELECT outcome FROM converge_dedup WHERE message_id = '" + id + "'"))
        .isEqualTo("BUSINESS_FAILURE");
  }

  @Test
  void messageWithoutIdIsRefusedAndVisibleInTheDlq() throws Exception {
    String topic = newTopic("payments");
    String group = RocketMQExtension.uniqueTopic("noid");
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = handler(group, (c, m) -> runs.incrementAndGet()).build();
    try (AutoCloseable consumer = start(topic, h, 1)) {
      send(topic, null, "acme", "order-4", "{\"foreign\":true}");
      await().atMost(WAIT)
          .until(() -> count("SELECT count(*) FROM converge_dlq WHERE consumer_group = '" + group + "'") == 1);
    }
    assertThat(runs).hasValue(0);
    assertThat(string(
        "SELECT reason_code || ' ' || topic || ' ' || convert_from(payload, 'UTF8') FROM converge_dlq "
            + "WHERE consumer_group = '" + group + "'"))
        .isEqualTo("MISSING_MESSAGE_ID " + topic + " {\"foreign\":true}");
    assertThat(string("SELECT headers FROM converge_dlq WHERE consumer_group = '" + group + "'"))
        .contains("converge-tenant=acme").doesNotContain("KEYS=");
  }
}
