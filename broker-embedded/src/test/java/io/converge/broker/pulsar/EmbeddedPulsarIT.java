package io.converge.broker.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.UnwritableDir;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The embedded Pulsar is a real Pulsar with transactions, in a child JVM beside RocketMQ's classes. */
@ExtendWith(PulsarExtension.class)
class EmbeddedPulsarIT {

  private static PulsarClient client;

  @BeforeAll
  static void connect(EmbeddedPulsar pulsar) throws Exception {
    client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).enableTransaction(true).build();
  }

  @AfterAll
  static void disconnect() throws Exception {
    client.close();
  }

  @Test
  void sentMessageIsConsumed() throws Exception {
    String topic = PulsarExtension.uniqueTopic("plain");
    try (Consumer<String> consumer = subscribe(topic);
        Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create()) {
      producer.send("hello");
      Message<String> m = consumer.receive(20, TimeUnit.SECONDS);
      assertThat(m).isNotNull();
      assertThat(m.getValue()).isEqualTo("hello");
    }
  }

  @Test
  void frozenBrokerAnswersNothingUntilThawed(EmbeddedPulsar pulsar) throws Exception {
    String topic = PulsarExtension.uniqueTopic("frozen");
    try (Consumer<String> consumer = subscribe(topic);
        Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).sendTimeout(0, TimeUnit.SECONDS)
            .create()) {
      pulsar.freeze();
      CompletableFuture<MessageId> sent;
      try {
        assertThat(pulsar.isFrozen()).isTrue();
        sent = producer.sendAsync("while frozen");
        assertThatThrownBy(() -> sent.get(3, TimeUnit.SECONDS)).as("a frozen broker acknowledges nothing")
            .isInstanceOf(TimeoutException.class);
      } finally {
        pulsar.thaw();
      }
      assertThat(pulsar.isFrozen()).isFalse();
      assertThat(sent.get(60, TimeUnit.SECONDS)).isNotNull();
      Message<String> m = consumer.receive(60, TimeUnit.SECONDS);
      assertThat(m).isNotNull();
      assertThat(m.getValue()).isEqualTo("while frozen");
    }
  }

  @Test
  void transactionOverTwoTopicsCommitsAndAbortsAsOne() throws Exception {
    String a = PulsarExtension.uniqueTopic("txa");
    String b = PulsarExtension.uniqueTopic("txb");
    try (Consumer<String> ca = subscribe(a);
        Consumer<String> cb = subscribe(b);
        Producer<String> pa = client.newProducer(Schema.STRING).topic(a).sendTimeout(0, TimeUnit.SECONDS).create();
        Producer<String> pb = client.newProducer(Schema.STRING).topic(b).sendTimeout(0, TimeUnit.SECONDS).create()) {
      Transaction aborted = client.newTransaction().withTransactionTimeout(1, TimeUnit.MINUTES).build().get();
      pa.newMessage(aborted).value("aborted-a").send();
      pb.newMessage(aborted).value("aborted-b").send();
      aborted.abort().get();

      Transaction committed = client.newTransaction().withTransactionTimeout(1, TimeUnit.MINUTES).build().get();
      pa.newMessage(committed).value("committed-a").send();
      pb.newMessage(committed).value("committed-b").send();
      committed.commit().get();

      // markers sent after both transactions ended: everything before them has been dispatched
      pa.send("marker");
      pb.send("marker");
      assertThat(drainUntilMarker(ca)).containsExactly("committed-a");
      assertThat(drainUntilMarker(cb)).containsExactly("committed-b");
    }
  }

  @Test
  void unwritableDataDirIsNamed(@TempDir Path tmp) throws Exception {
    Path dir = UnwritableDir.below(tmp, "pulsar");
    UnwritableDir.assertStartNames(EmbeddedPulsar.builder().dataDir(dir).build()::start, dir);
  }

  private static Consumer<String> subscribe(String topic) throws Exception {
    return client.newConsumer(Schema.STRING).topic(topic).subscriptionName("test")
        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
  }

  private static List<String> drainUntilMarker(Consumer<String> consumer) throws Exception {
    List<String> values = new ArrayList<>();
    while (true) {
      Message<String> m = consumer.receive(30, TimeUnit.SECONDS);
      assertThat(m).as("marker within 30 s after %s", values).isNotNull();
      consumer.acknowledge(m);
      if (m.getValue().equals("marker")) {
        return values;
      }
      values.add(m.getValue());
    }
  }
}
