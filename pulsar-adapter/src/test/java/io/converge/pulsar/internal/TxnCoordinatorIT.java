package io.converge.pulsar.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.api.transaction.TxnID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The adapter over the client's coordinator client, against the embedded Pulsar. */
@ExtendWith(PulsarExtension.class)
class TxnCoordinatorIT {

  @Test
  void anotherClientCommitsAnOpenTransactionByIdThenItIsNotFound(EmbeddedPulsar pulsar) throws Exception {
    String topic = PulsarExtension.uniqueTopic("tc");
    try (PulsarClient owner = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).enableTransaction(true).build();
        PulsarClient other = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).enableTransaction(true).build();
        Consumer<byte[]> consumer = other.newConsumer().topic(topic).subscriptionName("s-" + UUID.randomUUID())
            .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
        Producer<byte[]> producer = owner.newProducer().topic(topic).sendTimeout(0, TimeUnit.SECONDS).create()) {
      Transaction txn = owner.newTransaction().withTransactionTimeout(30, TimeUnit.SECONDS).build().get();
      producer.newMessage(txn).value("in-txn".getBytes(StandardCharsets.UTF_8)).send();
      TxnID id = txn.getTxnID();
      assertThat(consumer.receive(1, TimeUnit.SECONDS)).as("not visible before the commit").isNull();

      TxnCoordinator coordinator = new TxnCoordinator(other, Duration.ofSeconds(5));
      assertThat(coordinator.commit(id.getMostSigBits(), id.getLeastSigBits()))
          .isEqualTo(TxnCoordinator.Answer.COMMITTED);
      Message<byte[]> m = consumer.receive(10, TimeUnit.SECONDS);
      assertThat(m).isNotNull();
      assertThat(new String(m.getValue(), StandardCharsets.UTF_8)).isEqualTo("in-txn");
      assertThat(coordinator.commit(id.getMostSigBits(), id.getLeastSigBits()))
          .isEqualTo(TxnCoordinator.Answer.NOT_FOUND);
    }
  }

  @Test
  void anAbortedOrUnknownTransactionIsNotFound(EmbeddedPulsar pulsar) throws Exception {
    try (PulsarClient client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).enableTransaction(true).build()) {
      Transaction txn = client.newTransaction().withTransactionTimeout(30, TimeUnit.SECONDS).build().get();
      txn.abort().get();
      TxnCoordinator coordinator = new TxnCoordinator(client, Duration.ofSeconds(5));
      TxnID id = txn.getTxnID();
      assertThat(coordinator.commit(id.getMostSigBits(), id.getLeastSigBits()))
          .isEqualTo(TxnCoordinator.Answer.NOT_FOUND);
      assertThat(coordinator.commit(id.getMostSigBits(), Long.MAX_VALUE)).isEqualTo(TxnCoordinator.Answer.NOT_FOUND);
    }
  }
}
