package io.converge.examples.demo;

import io.converge.producer.OutgoingMessage;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;

/** Re-sends messages with a plain Pulsar producer per topic, keyed like the original. */
public final class PulsarInjector implements DuplicateInjector {

  private final PulsarClient client;
  private final Map<String, Producer<byte[]>> producers = new ConcurrentHashMap<>();

  PulsarInjector(String serviceUrl) throws PulsarClientException {
    client = PulsarClient.builder().serviceUrl(serviceUrl).build();
  }

  /** A started injector; a client that cannot start is an {@link IllegalStateException}. */
  public static DuplicateInjector open(String serviceUrl) {
    try {
      return new PulsarInjector(serviceUrl);
    } catch (PulsarClientException e) {
      throw new IllegalStateException("Cannot start the duplicate injector on " + serviceUrl, e);
    }
  }

  @Override
  public void send(OutgoingMessage m) throws Exception {
    Producer<byte[]> p = producers.get(m.topic());
    if (p == null) {
      p = client.newProducer().topic(m.topic()).create();
      producers.put(m.topic(), p);
    }
    var b = p.newMessage().value(m.payload()).properties(m.envelope("demo-injector", System.currentTimeMillis()));
    if (m.key() != null) {
      b.key(m.key());
    }
    b.send();
  }

  @Override
  public void close() {
    try {
      client.close();
    } catch (PulsarClientException e) {
      // closing a client of a demo that is ending: nothing left to protect
    }
  }
}
