package io.converge.broker.rocketmq;

import io.converge.broker.internal.Poll;
import io.converge.broker.EmbeddedServerException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Test support: a push consumer in its own new group that records every message delivered on one topic
 * (duplicates included), from the first offset. For a failover test it counts the deliveries by message id
 * ({@link #byId}): a broker restarted on its store may deliver again what its consumers had received (their
 * offsets were not yet on its disk). It polls the name server every second (the client's default is 30 s), so
 * that a broker back from an outage is consumed from at once. Thread-safe.
 *
 * <pre>{@code
 * try (RecordingConsumer c = RecordingConsumer.start(mq, topic)) {
 *   ... send ...
 *   c.awaitCount(1, Duration.ofSeconds(10));
 * }
 * }</pre>
 */
public final class RecordingConsumer implements AutoCloseable {

  private final DefaultMQPushConsumer consumer;
  private final List<MessageExt> received = new CopyOnWriteArrayList<>();

  private RecordingConsumer(DefaultMQPushConsumer consumer) {
    this.consumer = consumer;
  }

  /** Starts recording {@code topic} of {@code mq} in a new consumer group. */
  public static RecordingConsumer start(EmbeddedRocketMQ mq, String topic) {
    return start(mq.nameServerAddress(), topic);
  }

  /** Starts recording {@code topic} of {@code cluster} in a new consumer group. */
  public static RecordingConsumer start(EmbeddedRocketMQCluster cluster, String topic) {
    return start(cluster.nameServerAddress(), topic);
  }

  /** Starts recording {@code topic} through the name server {@code nameServer} in a new consumer group. */
  public static RecordingConsumer start(String nameServer, String topic) {
    DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("rec-" + UUID.randomUUID().toString().substring(0, 8));
    consumer.setNamesrvAddr(nameServer);
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    consumer.setInstanceName("rec-" + UUID.randomUUID());
    consumer.setPollNameServerInterval(1000);
    consumer.setPullInterval(0);
    RecordingConsumer recorder = new RecordingConsumer(consumer);
    try {
      consumer.subscribe(topic, "*");
      consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
        recorder.received.addAll(msgs);
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      });
      consumer.start();
    } catch (MQClientException e) {
      consumer.shutdown();
      throw new EmbeddedServerException("Cannot start a recording consumer on topic " + topic, e);
    }
    return recorder;
  }

  /** Every delivery so far, in arrival order, duplicates included. */
  public List<MessageExt> received() {
    return new ArrayList<>(received);
  }

  /** The deliveries so far that match {@code filter}. */
  public List<MessageExt> received(Predicate<MessageExt> filter) {
    return received.stream().filter(filter).toList();
  }

  /** The deliveries so far grouped by {@code id} (e.g. a user property), in order of first arrival. */
  public Map<String, List<MessageExt>> byId(Function<MessageExt, String> id) {
    Map<String, List<MessageExt>> byId = new LinkedHashMap<>();
    for (MessageExt m : received) {
      byId.computeIfAbsent(id.apply(m), k -> new CopyOnWriteArrayList<>()).add(m);
    }
    return byId;
  }

  /**
   * Waits until at least {@code count} deliveries match {@code filter}.
   *
   * @return those deliveries
   * @throws AssertionError when they have not all arrived within {@code timeout}
   */
  public List<MessageExt> await(Predicate<MessageExt> filter, int count, Duration timeout) {
    return Poll.value(timeout, Poll.EVERY, () -> {
      List<MessageExt> matching = received(filter);
      return matching.size() >= count ? matching : null;
    }, () -> new AssertionError("expected " + count + " matching messages within " + timeout + " but got "
        + received(filter).size() + " (of " + received.size() + " received)"),
        e -> new AssertionError("interrupted", e));
  }

  /** Waits until at least {@code count} messages have been delivered. */
  public List<MessageExt> awaitCount(int count, Duration timeout) {
    return await(m -> true, count, timeout);
  }

  @Override
  public void close() {
    consumer.shutdown();
  }
}
