package io.converge.outbox.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.Deliveries;
import io.converge.outbox.spi.OutboxSink;
import io.converge.testing.OutboxSinkContract;
import io.converge.core.Envelope;
import io.converge.producer.testing.StoppedRocketMQ;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link OutboxSinkContract} for {@link RocketMQSink} on the embedded RocketMQ: the pipelined batch (many
 * keys in flight, each key chained on one queue), a body over the client's limit as the refusal, a topic
 * the name server does not know while brokers are up as a refusal with the same text as the half-message
 * backend's ({@code RocketMQNoRouteIT} in producer-txn), and a cluster with no broker registered as an
 * outage.
 */
@ExtendWith(RocketMQExtension.class)
class RocketMQSinkContractIT extends OutboxSinkContract {

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
    // 600 pipelined sends to a topic created a moment ago: on a loaded 2-core CI machine the first ones waited
    // past a 2 s send timeout (each then an outage, correctly, but not what this test is about); the outage test
    // below keeps the short timeout it measures
    return sink(mq, Duration.ofSeconds(15));
  }

  @Override
  protected byte[] oversizePayload() {
    return new byte[100 * 1024];
  }

  @Override
  protected Arrivals arrivals(String topic) {
    Deliveries deliveries = new Deliveries(mq, topic);
    return new Arrivals() {

      @Override
      public void awaitAll(List<String> ids, Duration timeout) {
        deliveries.awaitAll(ids, timeout);
      }

      @Override
      public void awaitQuiet(Duration quiet) {
        deliveries.awaitQuiet(quiet);
      }

      @Override
      public List<Arrived> arrived() {
        return deliveries.raw().stream().map(m -> new Arrived(m.getUserProperty(Envelope.MESSAGE_ID),
            m.getUserProperty(Envelope.KEY), m.getQueueId(), m.getQueueOffset(), m.getProperties())).toList();
      }

      @Override
      public void close() {
        deliveries.close();
      }
    };
  }

  @Override
  protected String refusingTopic() {
    assertThat(mq.settings().autoCreateTopics()).as("the embedded broker must not create topics").isFalse();
    return RocketMQExtension.uniqueTopic("missing");
  }

  @Override
  protected String refusingTopicReason(String topic) {
    return "Topic " + topic + " is unknown to the RocketMQ name server";
  }

  @Override
  protected Outage outage() {
    StoppedRocketMQ down = StoppedRocketMQ.withTopic("outage");
    RocketMQSink sink;
    try {
      sink = sink(down.mq(), Duration.ofSeconds(2));
    } catch (RuntimeException e) {
      down.close();
      throw e;
    }
    return new Outage() {

      @Override
      public String topic() {
        return down.topic();
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
    return RocketMQSink.nameServer(server.nameServerAddress()).group(RocketMQExtension.uniqueTopic("g"))
        .sendTimeout(sendTimeout).maxMessageBytes(64 * 1024).build();
  }
}
