package io.converge.pulsar;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.consumer.IdempotentHandler;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.MessageIds;
import io.converge.core.Migrations;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.pulsar.internal.BrokerWait;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * Start-up while Pulsar is away ({@code pulsar.startupWait}, Spring {@code converge.startup.broker-wait}): the
 * embedded Pulsar is frozen (SIGSTOP: connections accepted, nothing answered, as a broker restarting or stalled)
 * while a producer and a consumer start. Within the wait they start once it is thawed and then publish and
 * receive; past a short wait the start fails with a {@link BrokerUnavailableException} naming the limit, and the
 * failed attempts leave no client threads behind.
 */
@ExtendWith(PulsarExtension.class)
class PulsarStartupWaitIT {

  private static DataSource db;
  private final EmbeddedPulsar pulsar;

  PulsarStartupWaitIT(EmbeddedPulsar pulsar) {
    this.pulsar = pulsar;
  }

  @BeforeAll
  static void schema() {
    db = ConvergePostgres.shared().newSchema("pulsarstartup");
    Migrations.apply(db, "producer");
    Migrations.apply(db, "pulsar");
    Migrations.apply(db, "consumer");
  }

  /** Fails on main: the producer's client gives up after one send timeout (1 s) of the frozen broker. */
  @Test
  void startedWhilePulsarIsFrozenTheyStartOnceItIsThawedThenPublishAndReceive() throws Exception {
    String topic = "startup-" + UUID.randomUUID().toString().substring(0, 8);
    String group = "startup-" + MessageIds.shared().next();
    List<String> handled = new CopyOnWriteArrayList<>();
    IdempotentHandler handler = IdempotentHandler.builder().group(group).dataSource(db)
        .handler((c, m) -> handled.add(m.envelopeMessageId())).build();
    ListAppender<ILoggingEvent> log = capture();
    CompletableFuture<TxnProducer> producer;
    CompletableFuture<PulsarIdempotentConsumer> consumer;
    pulsar.freeze();
    try {
      producer = CompletableFuture.supplyAsync(() -> producer(group, topic, Duration.ofSeconds(60)));
      consumer = CompletableFuture.supplyAsync(() -> PulsarIdempotentConsumer.builder()
          .serviceUrl(pulsar.serviceUrl()).topic(topic).handler(handler).consumers(1)
          .startupWait(Duration.ofSeconds(60))
          .start());
      // past the producer's send timeout: without the wait its start has failed by now
      CompletableFuture<TxnProducer> starting = producer;
      await().pollDelay(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(10))
          .failFast("the producer's start failed against the frozen broker", starting::isCompletedExceptionally)
          .until(() -> warnings(log, "the producer of group " + group) >= 2);
    } finally {
      pulsar.thaw();
      release(log);
    }
    try (TxnProducer p = producer.get(30, TimeUnit.SECONDS);
        PulsarIdempotentConsumer c = consumer.get(30, TimeUnit.SECONDS)) {
      String id = MessageIds.shared().next();
      p.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).id(id).key("k").payload(id.getBytes(UTF_8))
          .build()));
      await().atMost(Duration.ofSeconds(20)).until(() -> handled.contains(id));
      assertThat(c.subscription()).isEqualTo(group);
    }
    assertThat(log.list).filteredOn(e -> e.getLevel() == Level.WARN).first()
        .extracting(ILoggingEvent::getFormattedMessage)
        .asString().startsWith("Converge: waiting for Pulsar at " + pulsar.serviceUrl() + " for the producer of group "
            + group + ": ")
        .contains("(attempt 1, next in 500 ms; giving up after pulsar.startupWait=60s)");
  }

  /** A short wait against a broker that stays frozen: the typed error names the limit; no client is left behind. */
  @Test
  void pastAShortWaitTheStartFailsNamingTheLimitAndLeavesNoClientBehind() throws Exception {
    String topic = "startup-short-" + UUID.randomUUID().toString().substring(0, 8);
    IdempotentHandler handler = IdempotentHandler.builder().group("short-" + MessageIds.shared().next())
        .dataSource(db).handler((c, m) -> {
        }).build();
    Set<String> before = pulsarThreads();
    pulsar.freeze();
    try {
      long start = System.nanoTime();
      assertThatThrownBy(() -> producer("short", topic, Duration.ofSeconds(2)))
          .isInstanceOf(BrokerUnavailableException.class)
          .hasMessageContaining("Pulsar at " + pulsar.serviceUrl() + " did not answer the producer of group short "
              + "within pulsar.startupWait=2s (Spring: converge.startup.broker-wait;");
      Duration producerTook = Duration.ofNanos(System.nanoTime() - start);
      assertThat(producerTook).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(6));
      start = System.nanoTime();
      assertThatThrownBy(() -> PulsarIdempotentConsumer.builder().serviceUrl(pulsar.serviceUrl()).topic(topic)
          .handler(handler).consumers(1).startupWait(Duration.ofSeconds(2)).start())
          .isInstanceOf(BrokerUnavailableException.class)
          .hasMessageContaining("within pulsar.startupWait=2s");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(6));
      // the outbox sink does not connect when it is built: it starts against a frozen broker (the relay's backoff
      // waits out a broker that is away at the first send)
      start = System.nanoTime();
      PulsarOutboxSink sink = PulsarOutboxSink.serviceUrl(pulsar.serviceUrl()).build();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
      sink.close();
    } finally {
      pulsar.thaw();
    }
    // every failed attempt closed its client: its threads end (a closing client's own threads take a moment)
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(pulsarThreads()).isSubsetOf(before));
    assertThat(BrokerWait.DEFAULT_LIMIT).isEqualTo(Duration.ofSeconds(60));
  }

  private TxnProducer producer(String group, String topic, Duration wait) {
    return TxnProducer.builder().group(group).dataSource(db)
        .backend(PulsarBackend.builder(pulsar.serviceUrl()).sendTimeout(Duration.ofSeconds(1))
            .commitMargin(Duration.ofSeconds(2)).startupWait(wait).build())
        .topics(topic).localTransactionTimeout(Duration.ofSeconds(5)).build();
  }

  /** The names of the live threads a Pulsar client starts (io, timer, listener, internal). */
  private static Set<String> pulsarThreads() {
    return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
        .filter(n -> n.startsWith("pulsar-")).collect(Collectors.toSet());
  }

  private static ListAppender<ILoggingEvent> capture() {
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    ((Logger) LoggerFactory.getLogger(BrokerWait.class)).addAppender(appender);
    return appender;
  }

  private static void release(ListAppender<ILoggingEvent> appender) {
    ((Logger) LoggerFactory.getLogger(BrokerWait.class)).detachAppender(appender);
  }

  private static long warnings(ListAppender<ILoggingEvent> log, String what) {
    return log.list.stream().filter(e -> e.getLevel() == Level.WARN)
        .filter(e -> e.getFormattedMessage().contains(" for " + what + ": ")).count();
  }
}
