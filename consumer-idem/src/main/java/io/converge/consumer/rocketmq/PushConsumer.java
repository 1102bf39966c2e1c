package io.converge.consumer.rocketmq;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.spi.HeldReleaser;
import io.converge.consumer.spi.InFlightHandlers;
import io.converge.core.rocketmq.RocketMQClients;
import io.converge.core.rocketmq.RocketMQMessages;
import java.time.Duration;
import java.util.List;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListener;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.common.message.MessageExt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The only class that touches rocketmq-client types; loaded after the class-path check. */
final class PushConsumer {

  private static final Logger log = LoggerFactory.getLogger(PushConsumer.class);

  private final String group;
  private final IdempotentHandler handler;
  private final int redeliveryDelayLevel;
  private final long suspendMillis;
  private final InFlightHandlers inFlight = new InFlightHandlers();
  private volatile DefaultMQPushConsumer consumer;
  private volatile HeldReleaser releaser;

  private PushConsumer(String group, IdempotentHandler handler, int redeliveryDelayLevel, Duration suspend) {
    this.group = group;
    this.handler = handler;
    this.redeliveryDelayLevel = redeliveryDelayLevel;
    this.suspendMillis = suspend.toMillis();
  }

  static PushConsumer start(String nameServer, String topic, String tags, String group, IdempotentHandler handler,
      int threads, int redeliveryDelayLevel, String instanceName, Duration consumeTimeout, boolean ordered,
      Duration suspend, Duration releaseInterval) {
    PushConsumer push = new PushConsumer(group, handler, redeliveryDelayLevel, suspend);
    MessageListener listener = ordered
        ? (MessageListenerOrderly) push::consumeOrderly
        : (MessageListenerConcurrently) push::consumeConcurrently;
    // A handler waits out a database or broker outage on its consumer thread; RocketMQ sends a message
    // that is consumed for longer than consumeTimeout back to the broker (a second copy), so it is set long.
    // An orderly consumer keeps maxReconsumeTimes unlimited (RocketMQ's default for it): a message that
    // could not even be recorded is retried in place, never moved to RocketMQ's own %DLQ% over its key.
    push.consumer = RocketMQClients.startPushConsumer(nameServer, group, instanceName, threads, consumeTimeout, topic,
        tags, listener);
    push.releaser = HeldReleaser.start(handler, List.of(topic), releaseInterval);
    log.debug("RocketMQ consumer of group {} started on topic {} ({})", group, topic,
        ordered ? "orderly" : "concurrently, no per-key order");
    return push;
  }

  String group() {
    return group;
  }

  /** Interrupts handlers that wait out an outage (their messages are redelivered), then stops the client. */
  void shutdown() {
    inFlight.close();
    releaser.close();
    consumer.shutdown();
  }

  /** Hands one message to the handler; false when its outcome could not be recorded (not acked). */
  private boolean deliver(MessageExt m) {
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
      log.debug("RocketMQ message {} of group {}: {}, acking", m.getMsgId(), group, outcome);
      return true;
    } catch (RuntimeException e) {
      // Not recorded anywhere yet (the database refused even the failure): the broker must keep it.
      log.warn("RocketMQ message {} of group {} not acked, it will be delivered again: {}", m.getMsgId(), group,
          e.toString());
      return false;
    }
  }

  /** Delivers {@code messages} in order; false at the first one not acked (the ones after it are not delivered). */
  private boolean deliverAll(List<MessageExt> messages) {
    for (MessageExt m : messages) {
      if (!deliver(m)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The default: RocketMQ locks each queue for this consumer and calls with one queue's messages in queue
   * order, one call at a time per queue (other queues run in parallel). A message that is not acked
   * suspends its queue and is delivered again before the next message of the queue.
   */
  private ConsumeOrderlyStatus consumeOrderly(List<MessageExt> messages, ConsumeOrderlyContext context) {
    if (deliverAll(messages)) {
      return ConsumeOrderlyStatus.SUCCESS;
    }
    context.setSuspendCurrentQueueTimeMillis(suspendMillis);
    return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
  }

  /**
   * The opt-out ({@code ordered(false)}): several threads take messages of one queue at once, and a message
   * that is not acked goes back to the broker and returns after later messages. No per-key order.
   */
  private ConsumeConcurrentlyStatus consumeConcurrently(List<MessageExt> messages,
      ConsumeConcurrentlyContext context) {
    if (deliverAll(messages)) {
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    }
    context.setDelayLevelWhenNextConsume(redeliveryDelayLevel);
    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
  }
}
