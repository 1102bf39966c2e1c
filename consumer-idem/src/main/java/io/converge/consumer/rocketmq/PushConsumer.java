package io.converge.consumer.rocketmq;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.spi.InFlightHandlers;
import io.converge.producer.ConvergeException;
import java.util.List;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The only class that touches rocketmq-client types; loaded after the class-path check. */
final class PushConsumer implements MessageListenerConcurrently {

  private static final Logger log = LoggerFactory.getLogger(PushConsumer.class);

  private final DefaultMQPushConsumer consumer;
  private final IdempotentHandler handler;
  private final int redeliveryDelayLevel;
  private final InFlightHandlers inFlight = new InFlightHandlers();

  private PushConsumer(DefaultMQPushConsumer consumer, IdempotentHandler handler, int redeliveryDelayLevel) {
    this.consumer = consumer;
    this.handler = handler;
    this.redeliveryDelayLevel = redeliveryDelayLevel;
  }

  static PushConsumer start(String nameServer, String topic, String tags, String group, IdempotentHandler handler,
      int threads, int redeliveryDelayLevel, String instanceName, java.time.Duration consumeTimeout) {
    DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
    consumer.setNamesrvAddr(nameServer);
    consumer.setInstanceName(instanceName);
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    consumer.setConsumeThreadMin(threads);
    consumer.setConsumeThreadMax(threads);
    consumer.setConsumeMessageBatchMaxSize(1);
    // A handler waits out a database or broker outage on its consumer thread; RocketMQ sends a message
    // that is consumed for longer than this back to the broker (a second copy), so it is set long.
    consumer.setConsumeTimeout(consumeTimeout.toMinutes());
    PushConsumer push = new PushConsumer(consumer, handler, redeliveryDelayLevel);
    try {
      consumer.subscribe(topic, tags);
      consumer.registerMessageListener(push);
      consumer.start();
    } catch (MQClientException e) {
      consumer.shutdown();
      throw new ConvergeException("Cannot start the RocketMQ consumer of group " + group + " on topic " + topic
          + " (name server " + nameServer + ")", e);
    }
    log.debug("RocketMQ consumer of group {} started on topic {}", group, topic);
    return push;
  }

  String group() {
    return consumer.getConsumerGroup();
  }

  /** Interrupts handlers that wait out an outage (their messages are redelivered), then stops the client. */
  void shutdown() {
    inFlight.close();
    consumer.shutdown();
  }

  @Override
  public ConsumeConcurrentlyStatus consumeMessage(List<MessageExt> messages, ConsumeConcurrentlyContext context) {
    for (MessageExt m : messages) {
      IncomingMessage message = IncomingMessage.builder()
          .topic(m.getTopic())
          .headers(m.getProperties() == null ? java.util.Map.of() : userProperties(m))
          .payload(m.getBody() == null ? new byte[0] : m.getBody())
          .brokerMessageId(m.getMsgId())
          .brokerKey(m.getKeys())
          .deliveryCount(m.getReconsumeTimes() + 1)
          .build();
      try {
        Outcome outcome = inFlight.handle(handler, message);
        log.debug("RocketMQ message {} of group {}: {}, acking", m.getMsgId(), group(), outcome);
      } catch (RuntimeException e) {
        // Not recorded anywhere yet (the database refused even the failure): the broker must keep it.
        log.warn("RocketMQ message {} of group {} not acked, the broker will redeliver it: {}", m.getMsgId(), group(),
            e.toString());
        context.setDelayLevelWhenNextConsume(redeliveryDelayLevel);
        return ConsumeConcurrentlyStatus.RECONSUME_LATER;
      }
    }
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  }

  /** The user properties: RocketMQ's own system properties (KEYS, TAGS, …) are left out. */
  private static java.util.Map<String, String> userProperties(MessageExt m) {
    java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
    m.getProperties().forEach((k, v) -> {
      if (!org.apache.rocketmq.common.message.MessageConst.STRING_HASH_SET.contains(k)) {
        out.put(k, v);
      }
    });
    return out;
  }
}
