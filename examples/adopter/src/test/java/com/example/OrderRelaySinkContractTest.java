package com.example;

import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.Envelope;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.outbox.spi.OutboxSink;
import io.converge.testing.OutboxSinkContract;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The order service's relay sends its outbox to RocketMQ: converge-testing's {@link OutboxSinkContract} proves
 * that sink type ({@code RocketMQSink} on the embedded broker's name server, with the test's own send timeout and
 * message size limit, not the service's configuration): per-key order within a batch, a refused record stopping
 * only its key, a missing topic refused, a broker outage reported in bounded time. A service with a sink of its
 * own extends the contract the same way.
 */
@ExtendWith(RocketMQExtension.class)
class OrderRelaySinkContractTest extends OutboxSinkContract {

  private static EmbeddedRocketMQ mq;

  @BeforeAll
  static void broker(EmbeddedRocketMQ server) {
    mq = server;
  }

  @Override
  protected String uniqueTopic(String prefix) {
    return RocketMQExtension.uniqueTopic(prefix);
  }

  @Override
  protected void createTopic(String topic) {
    mq.createTopic(topic);
  }

  @Override
  protected OutboxSink newSink() {
    return sink(mq, Duration.ofSeconds(15));
  }

  @Override
  protected byte[] oversizePayload() {
    return new byte[100 * 1024];
  }

  @Override
  protected Arrivals arrivals(String topic) {
    RecordingConsumer consumer = RecordingConsumer.start(mq, topic);
    return new Arrivals() {

      @Override
      public void awaitAll(List<String> ids, Duration timeout) {
        await().atMost(timeout).until(() -> arrived().stream().map(Arrived::messageId)
            .collect(Collectors.toSet()).containsAll(Set.copyOf(ids)));
      }

      @Override
      public void awaitQuiet(Duration quiet) {
        AtomicInteger last = new AtomicInteger(-1);
        await().atMost(Duration.ofMinutes(1)).pollDelay(Duration.ZERO).pollInterval(quiet)
            .until(() -> last.getAndSet(consumer.received().size()) == consumer.received().size());
      }

      @Override
      public List<Arrived> arrived() {
        return consumer.received().stream().map(m -> new Arrived(m.getUserProperty(Envelope.MESSAGE_ID),
            m.getUserProperty(Envelope.KEY), m.getQueueId(), m.getQueueOffset(), m.getProperties())).toList();
      }

      @Override
      public void close() {
        consumer.close();
      }
    };
  }

  @Override
  protected String refusingTopic() {
    return RocketMQExtension.uniqueTopic("missing");
  }

  @Override
  protected String refusingTopicReason(String topic) {
    return "Topic " + topic + " is unknown to the RocketMQ name server";
  }

  @Override
  protected Outage outage() {
    // a name server with no broker registered: RocketMQ's state while its brokers are down
    EmbeddedRocketMQ down = EmbeddedRocketMQ.builder().build().startWithoutBroker();
    String topic = RocketMQExtension.uniqueTopic("outage");
    RocketMQSink sink = sink(down, Duration.ofSeconds(2));
    return new Outage() {

      @Override
      public String topic() {
        return topic;
      }

      @Override
      public OutboxSink sink() {
        return sink;
      }

      @Override
      public void close() {
        try (down) {
          sink.close();
        }
      }
    };
  }

  private static RocketMQSink sink(EmbeddedRocketMQ server, Duration sendTimeout) {
    return RocketMQSink.nameServer(server.nameServerAddress()).group(RocketMQExtension.uniqueTopic("orders-relay"))
        .sendTimeout(sendTimeout).maxMessageBytes(64 * 1024).build();
  }
}
