package io.converge.pulsar;

import io.converge.broker.pulsar.PulsarExtension;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.order.KeyOrderEndToEnd;
import io.converge.core.Envelope;
import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Per-key order end to end on Pulsar transactions: the {@code TxnProducer}'s Pulsar backend publishes, the
 * Pulsar binding ({@code Key_Shared}, four consumers) consumes; the binding is restarted mid-run (see
 * {@link KeyOrderEndToEnd}).
 */
@ExtendWith(PulsarExtension.class)
class PulsarTransactionsOrderIT extends KeyOrderEndToEnd {

  @RegisterExtension
  static final PulsarBroker pulsar = new PulsarBroker();

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
  protected AutoCloseable consume(String topic, IdempotentHandler handler) throws Exception {
    return PulsarIdempotentConsumer.builder().client(pulsar.client()).topic(topic).handler(handler)
        .redeliveryDelay(Duration.ofMillis(200)).consumers(4).start();
  }

  @Override
  protected void republish(String topic, IncomingMessage delivered) throws Exception {
    pulsar.producer(topic).newMessage().key(delivered.header(Envelope.KEY)).properties(delivered.headers())
        .value(delivered.payload())
        .send();
  }
}
