package io.converge.pulsar;

import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The JVM's embedded Pulsar ({@link PulsarExtension}) as a test class sees it, with the JVM's client and plain
 * producers ({@link PulsarSinkITSupport}); register with
 * {@code @RegisterExtension static final PulsarBroker pulsar = new PulsarBroker();}. Thread-safe.
 */
final class PulsarBroker implements BeforeAllCallback {

  private volatile EmbeddedPulsar server;

  @Override
  public void beforeAll(ExtensionContext context) {
    server = PulsarExtension.server(context);
  }

  /** The server itself (its admin URL, freezing), once the test class started. */
  EmbeddedPulsar server() {
    return server;
  }

  /** The broker's service URL. */
  String serviceUrl() {
    return server.serviceUrl();
  }

  /** The JVM's client of the broker. */
  PulsarClient client() throws PulsarClientException {
    return PulsarSinkITSupport.client(server);
  }

  /** The JVM's plain producer on {@code topic}. */
  Producer<byte[]> producer(String topic) throws PulsarClientException {
    return PulsarSinkITSupport.producer(server, topic);
  }
}
