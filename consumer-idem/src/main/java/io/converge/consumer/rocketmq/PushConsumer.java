package io.converge.consumer.rocketmq;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.spi.InFlightHandlers;
import io.converge.producer.rocketmq.RocketMQClients;
import io.converge.producer.rocketmq.RocketMQMessages;
import java.time.Duration;
import java.util.List;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.message.MessageExt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The only class that touches rocketmq-client types; loaded after the class-path check. */
final class PushConsumer implements MessageListenerConcurrently {

  private static final Logger log = LoggerFactory.getLogger(PushConsumer.class);

  private final String group;
  private final IdempotentHandler handler;
  private final int redeliveryDelayLevel;
  private final InFlightHandlers inFlight = new InFlightHandlers();
  private volatile DefaultMQPushConsumer consumer;

  private PushConsumer(String group, IdempotentHandler handler, int redeliveryDelayLevel) {
    this.group = group;
    this.handler = handler;
    this.redeliveryDelayLevel = redeliveryDelayLevel;
  }

  static PushConsumer start(String nameServer, String topic, String tags, String group, IdempotentHandler handler,
      int threads, int redeliveryDelayLevel, String instanceName, Duration consumeTimeout) {
    PushConsumer push = new PushConsumer(group, handler, redeliveryDelayLevel);
    // A handler waits out a database or broker outage on its consumer thread; RocketMQ sends a message
    // that is consumed for longer than consumeTimeout back to the broker (a second copy), so it is set long.
    push.consumer = RocketMQClients.startPushConsumer(nameServer, group, instanceName, threads, consumeTimeout, topic,
        tags,
        push);
    log.debug("RocketMQ consumer of group {} started on topic {}", group, topic);
    return push;
  }

  String group() {
    return group;
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
          .headers(RocketMQMessages.userProperties(m))
          .payload(RocketMQMessages.body(m))
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
}
