package io.converge.outbox;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.producer.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.testing.ChildProducerFactory;
import io.converge.producer.testing.MessageSink;
import io.converge.producer.testing.TxnProducerContract;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The shared contract, against the outbox backend and a polling relay (in this JVM) publishing to the
 * embedded RocketMQ. The crash tests' child JVM only writes the outbox; the relay here delivers.
 */
@ExtendWith(RocketMQExtension.class)
class OutboxTxnProducerIT extends TxnProducerContract {

  private static EmbeddedRocketMQ mq;
  private OutboxRelay relay;

  @BeforeAll
  static void broker(EmbeddedRocketMQ server) {
    mq = server;
  }

  @AfterEach
  void stopRelay() {
    if (relay != null) {
      relay.close();
      relay = null;
    }
  }

  @Override
  protected TxnProducer newProducer(String group, String topic, DataSource ds) {
    if (ds != db) {
      // an unreachable database (the DB-down case): no migration, no relay
      return TxnProducer.builder().group(group).dataSource(ds).backend(OutboxBackend.outbox()).build();
    }
    TxnProducer p = new OutboxChildFactory().create(group, topic, ds, childEnv());
    if (relay == null) {
      relay = OutboxRelay.builder().dataSource(db)
          .sink(RocketMQSink.nameServer(mq.nameServerAddress()).group("relay-" + UUID.randomUUID().toString().substring(0, 8))
              .sendTimeout(Duration.ofSeconds(1)).build())
          .brokerBackoff(Duration.ofMillis(100), Duration.ofSeconds(2))
          .build();
      relay.start();
    }
    return p;
  }

  @Override
  protected void createTopic(String topic) {
    mq.createTopic(topic);
  }

  @Override
  protected MessageSink consume(String topic) {
    return new Deliveries(mq, topic);
  }

  @Override
  protected void stopBroker() {
    mq.stopBroker();
  }

  @Override
  protected void startBroker() {
    mq.startBroker();
  }

  @Override
  protected boolean reachesBrokerInUnitOfWork() {
    return false;
  }

  @Override
  protected Class<? extends ChildProducerFactory> childFactory() {
    return OutboxChildFactory.class;
  }

  @Override
  protected Map<String, String> childEnv() {
    return Map.of();
  }

  @Override
  protected Duration recoveryWindow() {
    // the relay's next polls (idle at most 200 ms), plus the consumer's pull
    return Duration.ofSeconds(2);
  }

  @Override
  protected void awaitDiscarded(String id) {
    throw new UnsupportedOperationException("the outbox never discards a message: see localCommitAfterRecoveryDiscardedTheMessageFails");
  }

  /**
   * Case 5 of the contract has no meaning for the outbox: nothing is prepared on the broker, so no
   * recovery can discard a message while its transaction is still open. The outbox's equivalent risk is
   * the opposite: a slow transaction whose row gets a lower seq than rows committed after it. A relay
   * that moved a high-water mark past it would lose it. Here the slow unit stays open while a later
   * unit (another key) commits and is delivered; the slow message must not be delivered before its
   * commit, and must be delivered after it.
   */
  @Test
  @Override
  protected void localCommitAfterRecoveryDiscardedTheMessageFails() throws Exception {
    String topic = "slow-" + UUID.randomUUID().toString().substring(0, 8);
    createTopic(topic);
    try (TxnProducer p = newProducer("g-" + UUID.randomUUID().toString().substring(0, 8), topic, db);
        Deliveries sink = new Deliveries(mq, topic)) {
      String slow = MessageIds.shared().next();
      String fast = MessageIds.shared().next();
      CountDownLatch written = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<String> slowUnit = CompletableFuture.supplyAsync(() -> p.inTransaction(tx -> {
        tx.publish(OutgoingMessage.builder(topic).id(slow).key("slow").payload("slow".getBytes(UTF_8)).build());
        written.countDown();
        release.await(30, TimeUnit.SECONDS);
        return slow;
      }));
      assertThat(written.await(10, TimeUnit.SECONDS)).isTrue();
      p.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).id(fast).key("fast").payload("fast".getBytes(UTF_8)).build()));
      sink.awaitAll(Set.of(fast), Duration.ofSeconds(30));
      sink.awaitNoneFor(Duration.ofSeconds(1), Set.of(slow)); // several relay polls while the slow row is uncommitted
      assertThat(sink.ids()).as("an uncommitted row is never published").doesNotContain(slow);
      release.countDown();
      assertThat(slowUnit.get(30, TimeUnit.SECONDS)).isEqualTo(slow);
      sink.awaitAll(Set.of(slow), Duration.ofSeconds(30));
    }
  }
}
