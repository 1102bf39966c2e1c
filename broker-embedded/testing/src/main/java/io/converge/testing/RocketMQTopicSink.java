package io.converge.testing;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.core.Envelope;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;

/**
 * A {@link MessageSink} on a RocketMQ topic: a push consumer in a new group, from the first offset.
 * Unlike the client's defaults, a pull that failed (the broker was stopped, or had not yet taken the
 * subscription) is retried after {@link #RETRY_AFTER_FAILED_PULL} instead of 3 s, and the subscription is
 * sent every {@link #HEARTBEAT} instead of 30 s, so that deliveries start, and resume after a broker
 * restart, within about a second.
 */
public final class RocketMQTopicSink implements MessageSink {

  /** How long the consumer waits before it pulls again after a failed pull. */
  static final Duration RETRY_AFTER_FAILED_PULL = Duration.ofMillis(100);

  /** How often the consumer tells the broker its subscription. */
  static final Duration HEARTBEAT = Duration.ofSeconds(1);

  private final DefaultMQPushConsumer consumer;
  private final List<Delivered> received = new CopyOnWriteArrayList<>();

  /** Starts recording {@code topic} of {@code mq}. */
  public RocketMQTopicSink(EmbeddedRocketMQ mq, String topic) {
    String name = "sink-" + UUID.randomUUID().toString().substring(0, 8);
    consumer = new DefaultMQPushConsumer(name);
    consumer.setNamesrvAddr(mq.nameServerAddress());
    consumer.setInstanceName(name);
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    consumer.setPullInterval(0);
    consumer.getDefaultMQPushConsumerImpl().setPullTimeDelayMillsWhenException(RETRY_AFTER_FAILED_PULL.toMillis());
    // the heartbeat that tells the broker the subscription can be skipped at start (another heartbeat holds
    // the client's lock); the broker then refuses every pull ("subscription is not latest") until the next
    // one, 30 s later by default
    consumer.setHeartbeatBrokerInterval((int) HEARTBEAT.toMillis());
    try {
      consumer.subscribe(topic, "*");
      consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
        msgs.forEach(m -> received.add(delivered(m)));
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      });
      consumer.start();
    } catch (MQClientException e) {
      consumer.shutdown();
      throw new IllegalStateException("cannot consume " + topic, e);
    }
  }

  /** {@code m} as the contract sees a delivery: envelope id and key, every property, the body. */
  public static Delivered delivered(Message m) {
    return new Delivered(m.getUserProperty(Envelope.MESSAGE_ID), m.getUserProperty(Envelope.KEY),
        Map.copyOf(m.getProperties()), m.getBody());
  }

  @Override
  public List<Delivered> received() {
    return List.copyOf(received);
  }

  @Override
  public void close() {
    consumer.shutdown();
  }
}
