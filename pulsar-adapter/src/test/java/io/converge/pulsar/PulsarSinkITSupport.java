package io.converge.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * What the Pulsar ITs share on the embedded Pulsar: one client per test JVM (closed when the JVM exits) with a
 * plain producer per topic, short topic names and the broker's admin REST API. Thread-safe.
 */
final class PulsarSinkITSupport {

  private static PulsarClient client;
  private static final Map<String, Producer<byte[]>> PRODUCERS = new ConcurrentHashMap<>();

  private PulsarSinkITSupport() {
  }

  /** The JVM's reading client of {@code pulsar}, created on first use. */
  static synchronized PulsarClient client(EmbeddedPulsar pulsar) throws PulsarClientException {
    if (client == null) {
      PulsarClient created = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).build();
      Runtime.getRuntime().addShutdownHook(new Thread(created::closeAsync, "close-sink-it-pulsar-client"));
      client = created;
    }
    return client;
  }

  /** The JVM's plain producer on {@code topic}, created on first use (for messages sent as a foreign producer would). */
  static Producer<byte[]> producer(EmbeddedPulsar pulsar, String topic) throws PulsarClientException {
    PulsarClient c = client(pulsar);
    return PRODUCERS.computeIfAbsent(topic, t -> {
      try {
        return c.newProducer().topic(t).create();
      } catch (PulsarClientException e) {
        throw new IllegalStateException(e);
      }
    });
  }

  /** A fresh short topic name (Converge's topic names have no scheme; Pulsar reads them as public/default). */
  static String topic(String prefix) {
    String full = PulsarExtension.uniqueTopic(prefix);
    return full.substring(full.lastIndexOf('/') + 1);
  }

  /** Calls the broker's admin REST API on {@code persistent/public/default/<path>}; fails unless 2xx. */
  static void admin(EmbeddedPulsar pulsar, String method, String path, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(
        URI.create(pulsar.httpUrl() + "/admin/v2/persistent/public/default/" + path));
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    request.method(method,
        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    HttpResponse<String> r = HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("%s %s: %s", method, path, r.body()).isBetween(200, 299);
  }
}
