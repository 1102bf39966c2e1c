package io.converge.examples.demo;

import io.converge.core.ConvergeException;
import io.converge.producer.OutgoingMessage;
import io.converge.core.rocketmq.KeyQueueSelector;
import io.converge.core.rocketmq.RocketMQClients;
import io.converge.producer.rocketmq.OutgoingMessages;
import java.util.UUID;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;

/** Re-sends messages with a plain RocketMQ producer, on the queue their key selects (Converge's own rule). */
public final class RocketMQInjector implements DuplicateInjector {

  private final DefaultMQProducer producer;

  private RocketMQInjector(DefaultMQProducer producer) {
    this.producer = producer;
  }

  /** A started injector; a client that cannot start is an {@link IllegalStateException}. */
  public static DuplicateInjector open(String nameServer) {
    try {
      String group = "demo-injector-" + UUID.randomUUID().toString().substring(0, 8);
      return new RocketMQInjector(RocketMQClients.startProducer(nameServer, group));
    } catch (ConvergeException e) {
      throw new IllegalStateException("Cannot start the duplicate injector on " + nameServer, e);
    }
  }

  @Override
  public void send(OutgoingMessage m) throws Exception {
    SendResult r = producer.send(OutgoingMessages.toMessage(m, "demo-injector", System.currentTimeMillis()),
        KeyQueueSelector.BY_KEY, OutgoingMessages.keys(m));
    if (r.getSendStatus() != SendStatus.SEND_OK) {
      throw new IllegalStateException("RocketMQ answered " + r.getSendStatus() + " to duplicate " + m.id());
    }
  }

  @Override
  public void close() {
    producer.shutdown();
  }
}
