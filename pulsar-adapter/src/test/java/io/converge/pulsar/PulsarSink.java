package io.converge.pulsar;

import io.converge.core.Envelope;
import io.converge.testing.Delivered;
import io.converge.testing.MessageSink;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;

/** A {@link MessageSink} on a Pulsar topic: an exclusive subscription from the earliest message. */
final class PulsarSink implements MessageSink {

  private final PulsarClient client;
  private final Consumer<byte[]> consumer;
  private final List<Delivered> received = new CopyOnWriteArrayList<>();

  PulsarSink(String serviceUrl, String topic) {
    this(serviceUrl, topic, "sink-" + UUID.randomUUID());
  }

  /** On subscription {@code subscription}: an existing one resumes where it stands (its backlog is kept). */
  PulsarSink(String serviceUrl, String topic, String subscription) {
    try {
      this.client = PulsarClient.builder().serviceUrl(serviceUrl).build();
      this.consumer = client.newConsumer()
          .topic(topic)
          .subscriptionName(subscription)
          .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
          .messageListener((c, m) -> {
            received.add(new Delivered(m.getProperty(Envelope.MESSAGE_ID), m.getKey(), Map.copyOf(m.getProperties()),
                m.getValue()));
            c.acknowledgeAsync(m);
          })
          .subscribe();
    } catch (PulsarClientException e) {
      throw new IllegalStateException("cannot consume " + topic, e);
    }
  }

  @Override
  public List<Delivered> received() {
    return List.copyOf(received);
  }

  @Override
  public void close() {
    try {
      consumer.close();
      client.close();
    } catch (PulsarClientException e) {
      // test teardown
    }
  }
}
