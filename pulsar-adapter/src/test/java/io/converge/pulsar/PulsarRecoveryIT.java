package io.converge.pulsar;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.producer.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.spi.CrashPoints;
import io.converge.producer.testing.Delivered;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Recovery paths the shared contract does not reach. */
@ExtendWith(PulsarExtension.class)
class PulsarRecoveryIT {

  private DataSource db;

  @BeforeEach
  void schema() {
    db = PulsarSchemas.migrated("pulsarrec");
  }

  @AfterEach
  void unhook() {
    CrashPoints.install(null);
  }

  private TxnProducer producer(String group, String topic, EmbeddedPulsar pulsar, SimpleMeterRegistry registry) {
    return TxnProducer.builder().group(group).dataSource(db)
        .backend(PulsarBackend.serviceUrl(pulsar.serviceUrl()).transactionTimeout(PulsarChildFactory.TXN_TIMEOUT)
            .commitMargin(PulsarChildFactory.COMMIT_MARGIN).sendTimeout(PulsarChildFactory.SEND_TIMEOUT)
            .recoveryInterval(Duration.ofMillis(300)).meterRegistry(registry))
        .topics(topic).localTransactionTimeout(PulsarChildFactory.LOCAL_TX_TIMEOUT).build();
  }

  private long openRows() {
    return PulsarSchemas.openRows(db);
  }

  @Test
  void aTransactionTimedOutAfterTheDbCommitIsRepublishedWithTheSameIdByAnotherInstance(EmbeddedPulsar pulsar)
      throws Exception {
    String topic = "rec-" + UUID.randomUUID().toString().substring(0, 8);
    String group = "g-" + UUID.randomUUID().toString().substring(0, 8);
    String id = MessageIds.shared().next();
    try (PulsarSink sink = new PulsarSink(pulsar.serviceUrl(), topic)) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      TxnProducer first = producer(group, topic, pulsar, registry);
      // the instance "dies" between the DB commit and the Pulsar commit, and is stopped before its scan sees the row
      CrashPoints.install(point -> {
        if (point == CrashPoints.Point.AFTER_DB_COMMIT) {
          throw new IllegalStateException("died after the DB commit");
        }
      });
      assertThatThrownBy(() -> first.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).id(id).key("k-1")
          .header("h", "v").payload("republished".getBytes(UTF_8)).build()))).hasMessage("died after the DB commit");
      first.close();
      CrashPoints.install(null);
      assertThat(openRows()).isEqualTo(1);

      // the broker aborts the transaction on its timeout: the committed message is nowhere
      Duration aborted = PulsarChildFactory.TXN_TIMEOUT.plusMillis(1500);
      await("nothing delivered of the aborted transaction").during(aborted).atMost(aborted.plusSeconds(5))
          .until(() -> sink.received().isEmpty());
      assertThat(sink.received()).isEmpty();

      SimpleMeterRegistry heirRegistry = new SimpleMeterRegistry();
      try (TxnProducer heir = producer(group, topic, pulsar, heirRegistry)) {
        await("republished").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
            .until(() -> !sink.received().isEmpty());
        List<Delivered> got = sink.received();
        assertThat(got).extracting(Delivered::id).containsExactly(id);
        assertThat(got.get(0).key()).isEqualTo("k-1");
        assertThat(got.get(0).headers()).containsEntry("h", "v");
        assertThat(new String(got.get(0).payload(), UTF_8)).isEqualTo("republished");
        assertThat(openRows()).isZero();
        await("the open gauge updated").atMost(Duration.ofSeconds(5))
            .until(() -> heirRegistry.get("txn.pulsar.open").gauge().value() == 0);
        assertThat(heirRegistry.get("txn.pulsar.open").gauge().value()).isZero();
      }
    }
  }

  @Test
  void aCommittedUnitIsConfirmedAndGaugesShowAnOpenOne(EmbeddedPulsar pulsar) throws Exception {
    String topic = "conf-" + UUID.randomUUID().toString().substring(0, 8);
    String group = "g-" + UUID.randomUUID().toString().substring(0, 8);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (TxnProducer p = producer(group, topic, pulsar, registry)) {
      p.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).payload("x".getBytes(UTF_8)).build()));
      // the owner confirms its own commit, on its confirmation thread
      await().atMost(Duration.ofSeconds(5)).until(() -> openRows() == 0);
      // a unit paused after its DB commit is visible in the gauges while it is open
      CountDownLatch resume = new CountDownLatch(1);
      CrashPoints.install(point -> {
        if (point == CrashPoints.Point.AFTER_DB_COMMIT) {
          try {
            resume.await(10, TimeUnit.SECONDS); // paused until the gauges were read
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      });
      Thread paused = new Thread(
          () -> p.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).payload("y".getBytes(UTF_8)).build())));
      paused.start();
      await("the paused unit in the open gauge").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
          .until(() -> registry.get("txn.pulsar.open").gauge().value() >= 1);
      assertThat(registry.get("txn.pulsar.open").gauge().value()).isEqualTo(1);
      assertThat(registry.get("txn.pulsar.oldest.age").gauge().value()).isGreaterThanOrEqualTo(0);
      resume.countDown();
      paused.join();
    }
  }
}
