package io.converge.examples.demo;

import io.converge.producer.OutgoingMessage;
import java.util.Map;
import java.util.UUID;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

/** Re-sends messages with a plain RocketMQ producer, on the queue their key selects. */
final class RocketMQInjector implements DuplicateInjector {

  private static final MessageQueueSelector BY_KEY = (queues, msg, key) ->
      queues.get(Math.floorMod(key.hashCode(), queues.size()));

  private final DefaultMQProducer producer;

  RocketMQInjector(String nameServer) throws MQClientException {
    producer = new DefaultMQProducer("demo-injector-" + UUID.randomUUID().toString().substring(0, 8));
    producer.setNamesrvAddr(nameServer);
    producer.setInstanceName("demo-injector-" + UUID.randomUUID());
    producer.start();
  }

  /** A started injector; a client that cannot start is an {@link IllegalStateException}. */
  static DuplicateInjector open(String nameServer) {
    try {
      return new RocketMQInjector(nameServer);
    } catch (MQClientException e) {
      throw new IllegalStateException("Cannot start the duplicate injector on " + nameServer, e);
    }
  }

  @Override
  public void send(OutgoingMessage m) throws Exception {
    Message msg = new Message(m.topic(), m.tag(), m.key() != null ? m.key() : m.id(), m.payload());
    for (Map.Entry<String, String> h : m.envelope("demo-injector", System.currentTimeMillis()).entrySet()) {
      msg.putUserProperty(h.getKey(), h.getValue());
    }
    SendResult r = producer.send(msg, BY_KEY, m.key() != null ? m.key() : m.id());
    if (r.getSendStatus() != SendStatus.SEND_OK) {
      throw new IllegalStateException("RocketMQ answered " + r.getSendStatus() + " to duplicate " + m.id());
    }
  }

  @Override
  public void close() {
    producer.shutdown();
  }
}
