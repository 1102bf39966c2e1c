package io.converge.consumer.rocketmq;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.Envelope;
import io.converge.core.rocketmq.RocketMQClients;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The shared embedded RocketMQ ({@link RocketMQExtension}) seen by a consumer test: unique topics created on it
 * and a plain producer publishing as a foreign producer would (probes, copies, hand-made redeliveries). One
 * producer per test JVM, started on first use and shut down when the run ends, before the broker; register with
 * {@code @RegisterExtension static final RawRocketMQ mq = new RawRocketMQ();}. Thread-safe.
 */
public final class RawRocketMQ implements BeforeAllCallback {

  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RawRocketMQ.class);

  private volatile EmbeddedRocketMQ server;
  private volatile DefaultMQProducer producer;

  @Override
  public void beforeAll(ExtensionContext context) {
    EmbeddedRocketMQ mq = RocketMQExtension.server(context);
    producer = context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(Producer.class,
        k -> new Producer(RocketMQClients.startProducer(mq.nameServerAddress(), RocketMQExtension.uniqueTopic("raw"))),
        Producer.class).producer;
    server = mq;
  }

  /** The broker. */
  public EmbeddedRocketMQ server() {
    return server;
  }

  /** The broker's name-server address. */
  public String nameServer() {
    return server.nameServerAddress();
  }

  /** A topic unique to this call ({@link RocketMQExtension#uniqueTopic}), created on the broker. */
  public String newTopic(String prefix) {
    String topic = RocketMQExtension.uniqueTopic(prefix);
    server.createTopic(topic);
    return topic;
  }

  /** Sends a message with a new envelope id (its body {@code {"id":"<id>"}}) and returns the id. */
  public String sendNew(String topic) throws Exception {
    String id = UUID.randomUUID().toString();
    Message m = new Message(topic, ("{\"id\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8));
    m.putUserProperty(Envelope.MESSAGE_ID, id);
    producer.send(m);
    return id;
  }

  /** Sends {@code message} on a queue of the client's choice. */
  public SendResult send(Message message) throws Exception {
    return producer.send(message);
  }

  /** Sends {@code message} on the queue {@code selector} picks for {@code arg}. */
  public SendResult send(Message message, MessageQueueSelector selector, Object arg) throws Exception {
    return producer.send(message, selector, arg);
  }

  /** The JVM's producer; the run's end closes it (the root store closes it before the broker it started after). */
  private record Producer(DefaultMQProducer producer) implements AutoCloseable {

    @Override
    public void close() {
      producer.shutdown();
    }
  }
}
