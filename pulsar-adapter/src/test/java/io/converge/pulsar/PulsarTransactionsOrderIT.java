package io.converge.pulsar;

import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.order.KeyOrderEndToEnd;
import io.converge.producer.Envelope;
import io.converge.producer.TxnProducer;
import io.converge.producer.schema.Migrations;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Per-key order end to end on Pulsar transactions: the {@code TxnProducer}'s Pulsar backend publishes, the
 * Pulsar binding ({@code Key_Shared}, four consumers) consumes; the binding is restarted mid-run (see
 * {@link KeyOrderEndToEnd}).
 */
@ExtendWith(PulsarExtension.class)
class PulsarTransactionsOrderIT extends KeyOrderEndToEnd {

  private static EmbeddedPulsar pulsar;
  private static PulsarClient client;
  private static final Map<String, Producer<byte[]>> raw = new ConcurrentHashMap<>();

  @BeforeAll
  static void broker(EmbeddedPulsar server) throws Exception {
    pulsar = server;
    client = PulsarClient.builder().serviceUrl(server.serviceUrl()).build();
  }

  @AfterAll
  static void closeClient() throws Exception {
    client.close(); // and its producers
  }

  /** A short name (the producer's topics are names, not URLs) in {@code public/default}. */
  @Override
  protected String newTopic(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 12);
  }

  @Override
  protected TxnProducer producer(DataSource db, String topic) {
    Migrations.apply(db, "pulsar");
    // the backend's default timeouts: the crash tests' short ones fence units of work on a loaded machine
    return TxnProducer.builder().group("order-" + UUID.randomUUID().toString().substring(0, 8)).dataSource(db)
        .backend(PulsarBackend.serviceUrl(pulsar.serviceUrl())).topics(topic).build();
  }

  @Override
  protected AutoCloseable consume(String topic, IdempotentHandler handler) {
    return PulsarIdempotentConsumer.builder().client(client).topic(topic).handler(handler)
        .redeliveryDelay(Duration.ofMillis(200)).consumers(4).start();
  }

  @Override
  protected void republish(String topic, IncomingMessage delivered) throws Exception {
    raw.computeIfAbsent(topic, t -> {
      try {
        return client.newProducer().topic(t).create();
      } catch (PulsarClientException e) {
        throw new IllegalStateException(e);
      }
    }).newMessage().key(delivered.header(Envelope.KEY)).properties(delivered.headers()).value(delivered.payload())
        .send();
  }
}
