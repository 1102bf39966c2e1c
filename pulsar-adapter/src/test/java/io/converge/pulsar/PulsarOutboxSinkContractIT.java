package io.converge.pulsar;

import static org.awaitility.Awaitility.await;

import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.outbox.spi.OutboxSink;
import io.converge.testing.OutboxSinkContract;
import io.converge.core.Envelope;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link OutboxSinkContract} for {@link PulsarOutboxSink} on the embedded Pulsar: topics with four
 * partitions, a body over the broker's 5 MB limit as the refusal, a terminated topic as the topic that
 * refuses every write (the stand-in for a deleted topic: Converge's topic names cannot name a namespace
 * without auto-creation), and the frozen broker ({@code SIGSTOP}) as the outage.
 */
@ExtendWith(PulsarExtension.class)
class PulsarOutboxSinkContractIT extends OutboxSinkContract {

  private static EmbeddedPulsar pulsar;
  private static PulsarClient client;

  @BeforeAll
  static void setUp(EmbeddedPulsar server) throws Exception {
    pulsar = server;
    client = PulsarSinkITSupport.client(server);
  }

  @Override
  protected String uniqueTopic(String prefix) {
    return PulsarSinkITSupport.topic(prefix);
  }

  @Override
  protected void createTopic(String topic) throws Exception {
    admin("PUT", topic + "/partitions", "4");
  }

  @Override
  protected OutboxSink newSink() {
    return PulsarOutboxSink.serviceUrl(pulsar.serviceUrl()).sendTimeout(Duration.ofSeconds(2)).build();
  }

  @Override
  protected byte[] oversizePayload() {
    return new byte[6 * 1024 * 1024];
  }

  @Override
  protected Arrivals arrivals(String topic) throws Exception {
    List<Arrived> arrived = new CopyOnWriteArrayList<>();
    AtomicLong position = new AtomicLong();
    AtomicLong lastArrival = new AtomicLong(System.nanoTime());
    Consumer<byte[]> consumer = client.newConsumer().topic(topic).subscriptionName("check-" + UUID.randomUUID())
        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
        .messageListener((c, m) -> {
          // one listener thread per partition consumer: a partition's messages arrive in their order
          synchronized (arrived) {
            arrived.add(new Arrived(m.getProperty(Envelope.MESSAGE_ID), m.getKey(),
                ((MessageIdAdv) m.getMessageId()).getPartitionIndex(), position.incrementAndGet(), m.getProperties()));
          }
          lastArrival.set(System.nanoTime());
          c.acknowledgeAsync(m);
        }).subscribe();
    return new Arrivals() {

      @Override
      public void awaitAll(List<String> ids, Duration timeout) {
        await().atMost(timeout).until(() -> arrived.stream().map(Arrived::messageId).toList().containsAll(ids));
      }

      @Override
      public void awaitQuiet(Duration quiet) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
            .until(() -> System.nanoTime() - lastArrival.get() >= quiet.toNanos());
      }

      @Override
      public List<Arrived> arrived() {
        return List.copyOf(arrived);
      }

      @Override
      public void close() throws Exception {
        consumer.close();
      }
    };
  }

  @Override
  protected String refusingTopic() throws Exception {
    String topic = uniqueTopic("terminated");
    admin("PUT", topic, null);
    admin("POST", topic + "/terminate", null);
    return topic;
  }

  @Override
  protected String refusingTopicReason(String topic) {
    return "TopicTerminated";
  }

  @Override
  protected Outage outage() throws Exception {
    String topic = uniqueTopic("outage");
    admin("PUT", topic, null);
    OutboxSink sink = newSink();
    pulsar.freeze();
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
      public Duration reportedWithin() {
        return Duration.ofSeconds(10); // the send timeout is 2 s
      }

      @Override
      public void close() {
        pulsar.thaw();
        sink.close();
      }
    };
  }

  private static void admin(String method, String path, String body) throws Exception {
    PulsarSinkITSupport.admin(pulsar, method, path, body);
  }

}
