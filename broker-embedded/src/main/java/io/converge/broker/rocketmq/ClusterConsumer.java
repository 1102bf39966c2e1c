package io.converge.broker.rocketmq;

import io.converge.broker.EmbeddedServerException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * A consumer of one topic of an {@link EmbeddedRocketMQCluster} that records every delivery, duplicates
 * included, for a failover test to count them by message id: a broker restarted on its store may deliver
 * again what its consumers had received (their offsets were not yet on its disk). It polls the name server
 * every second (the client's default is 30 s), so that a broker back from an outage is consumed from at
 * once. Thread-safe.
 */
public final class ClusterConsumer implements AutoCloseable {

  private final DefaultMQPushConsumer consumer;
  private final List<MessageExt> received = new CopyOnWriteArrayList<>();

  private ClusterConsumer(DefaultMQPushConsumer consumer) {
    this.consumer = consumer;
  }

  /** Starts recording {@code topic} of {@code cluster} from its first offsets, in a new consumer group. */
  public static ClusterConsumer start(EmbeddedRocketMQCluster cluster, String topic) {
    DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("rec-" + UUID.randomUUID().toString().substring(0, 8));
    consumer.setNamesrvAddr(cluster.nameServerAddress());
    consumer.setInstanceName("rec-" + UUID.randomUUID());
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    consumer.setPollNameServerInterval(1000);
    consumer.setPullInterval(0);
    ClusterConsumer recorder = new ClusterConsumer(consumer);
    try {
      consumer.subscribe(topic, "*");
      consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
        recorder.received.addAll(msgs);
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      });
      consumer.start();
    } catch (MQClientException e) {
      consumer.shutdown();
      throw new EmbeddedServerException("Cannot start a consumer of topic " + topic, e);
    }
    return recorder;
  }

  /** Every delivery so far, in arrival order, duplicates included. */
  public List<MessageExt> received() {
    return List.copyOf(received);
  }

  /** The deliveries so far grouped by {@code id} (e.g. a user property), in order of first arrival. */
  public Map<String, List<MessageExt>> byId(Function<MessageExt, String> id) {
    Map<String, List<MessageExt>> byId = new LinkedHashMap<>();
    for (MessageExt m : received) {
      byId.computeIfAbsent(id.apply(m), k -> new CopyOnWriteArrayList<>()).add(m);
    }
    return byId;
  }

  @Override
  public void close() {
    consumer.shutdown();
  }
}
