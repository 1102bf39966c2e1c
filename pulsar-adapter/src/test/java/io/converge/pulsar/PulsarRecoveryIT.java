package io.converge.pulsar;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.CrashPoints;
import io.converge.core.Envelope;
import io.converge.testing.Delivered;
import io.converge.testing.GlobalSpans;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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
    return producer(group, topic, pulsar, registry, Clock.systemUTC());
  }

  private TxnProducer producer(String group, String topic, EmbeddedPulsar pulsar, SimpleMeterRegistry registry,
      Clock clock) {
    return TxnProducer.builder().group(group).dataSource(db).clock(clock)
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
    try (PulsarSink sink = new PulsarSink(pulsar.serviceUrl(), topic); GlobalSpans spans = GlobalSpans.install()) {
      Span request = spans.tracer().spanBuilder("POST /orders").startSpan(); // the trace the unit runs in
      try (Scope ignored = request.makeCurrent()) {
        diesAfterTheDbCommitAndItsTransactionTimesOut(group, topic, pulsar, sink,
            OutgoingMessage.builder(topic).id(id).key("k-1").header("h", "v").payload("republished".getBytes(UTF_8))
                .build());
      } finally {
        request.end();
      }
      String trace = request.getSpanContext().getTraceId();

      SimpleMeterRegistry heirRegistry = new SimpleMeterRegistry();
      try (TxnProducer heir = producer(group, topic, pulsar, heirRegistry)) {
        await("republished").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
            .until(() -> !sink.received().isEmpty());
        List<Delivered> got = sink.received();
        assertThat(got).extracting(Delivered::id).containsExactly(id);
        assertThat(got.get(0).key()).isEqualTo("k-1");
        assertThat(got.get(0).headers()).containsEntry("h", "v");
        // the re-published message continues the original trace; the re-publish is a send span linked to it
        assertThat(got.get(0).headers().get(Envelope.TRACEPARENT)).startsWith("00-" + trace + "-");
        assertThat(spans.all()).filteredOn(s -> s.getName().equals("send " + topic)).singleElement()
            .satisfies(s -> assertThat(s.getLinks()).singleElement()
                .satisfies(l -> assertThat(l.getSpanContext().getTraceId()).isEqualTo(trace)));
        assertThat(new String(got.get(0).payload(), UTF_8)).isEqualTo("republished");
        // the re-publish's Pulsar commit comes before the log row's closing commit: a consumer may see it first
        await("the log row closed").atMost(Duration.ofSeconds(10)).until(() -> openRows() == 0);
        await("the open gauge updated").atMost(Duration.ofSeconds(5))
            .until(() -> heirRegistry.get("txn.pulsar.open").gauge().value() == 0);
        assertThat(heirRegistry.get("txn.pulsar.open").gauge().value()).isZero();
      }
    }
  }

  /**
   * A unit of {@code messages} whose instance "dies" between the DB commit and the Pulsar commit, and is
   * stopped before its scan sees the row; the broker then aborts its transaction on its timeout, so the
   * committed messages are nowhere but in the log.
   */
  private void diesAfterTheDbCommitAndItsTransactionTimesOut(String group, String topic, EmbeddedPulsar pulsar,
      PulsarSink sink, OutgoingMessage... messages) {
    TxnProducer first = producer(group, topic, pulsar, new SimpleMeterRegistry());
    CrashPoints.install(point -> {
      if (point == CrashPoints.Point.AFTER_DB_COMMIT) {
        throw new IllegalStateException("died after the DB commit");
      }
    });
    assertThatThrownBy(() -> first.inTransaction(tx -> {
      for (OutgoingMessage m : messages) {
        tx.publish(m);
      }
      return null;
    })).hasMessage("died after the DB commit");
    first.close();
    CrashPoints.install(null);
    assertThat(openRows()).isEqualTo(1);
    assertThat(PulsarSchemas.rows(db, "converge_pulsar_unit")).as("logged as one row of the unit table").isEqualTo(1);
    assertThat(PulsarSchemas.rows(db, "converge_pulsar_txn") + PulsarSchemas.rows(db, "converge_pulsar_txn_message")
        + PulsarSchemas.rows(db, "converge_txn_log")).as("nothing in the tables of earlier versions").isZero();
    Duration aborted = PulsarChildFactory.TXN_TIMEOUT.plusMillis(1500);
    await("nothing delivered of the aborted transaction").during(aborted).atMost(aborted.plusSeconds(5))
        .until(() -> sink.received().isEmpty());
    assertThat(sink.received()).isEmpty();
  }

  /**
   * Issue 31, items 7 and 8, on one timed-out unit (each costs the broker's transaction timeout): its messages come
   * back in their publish order although their ids sort the other way, and an heir whose clock lags the writer's by
   * 10 minutes still takes the aborted transaction for aborted (the deadline is the database's) and republishes.
   */
  @Test
  void aLaggingHeirRepublishesATimedOutUnitInItsPublishOrderWhateverItsIds(EmbeddedPulsar pulsar) throws Exception {
    String topic = "seq-" + UUID.randomUUID().toString().substring(0, 8);
    String group = "g-" + UUID.randomUUID().toString().substring(0, 8);
    try (PulsarSink sink = new PulsarSink(pulsar.serviceUrl(), topic)) {
      // application-set ids whose text order is the reverse of the publish order
      List<String> ids = Stream.generate(MessageIds.shared()::next).limit(3).sorted(Comparator.reverseOrder()).toList();
      diesAfterTheDbCommitAndItsTransactionTimesOut(group, topic, pulsar, sink,
          OutgoingMessage.builder(topic).id(ids.get(0)).key("k-1").payload("created".getBytes(UTF_8)).build(),
          OutgoingMessage.builder(topic).id(ids.get(1)).key("k-1").payload("paid".getBytes(UTF_8)).build(),
          OutgoingMessage.builder(topic).id(ids.get(2)).key("k-1").payload("shipped".getBytes(UTF_8)).build());
      // the heir's clock is 10 minutes behind the writer's: by its own clock the deadline is far ahead
      Clock lagging = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(-10));
      try (TxnProducer heir = producer(group, topic, pulsar, new SimpleMeterRegistry(), lagging)) {
        await("the unit resolved").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
            .until(() -> openRows() == 0);
        await("republished").atMost(Duration.ofSeconds(5)).until(() -> sink.received().size() >= 3);
        assertThat(sink.received()).extracting(Delivered::id).containsExactlyElementsOf(ids);
        assertThat(sink.received()).extracting(d -> new String(d.payload(), UTF_8))
            .containsExactly("created", "paid", "shipped");
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
