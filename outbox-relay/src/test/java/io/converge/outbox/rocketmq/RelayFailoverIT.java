package io.converge.outbox.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQCluster;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.Outbox;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.RelayFixture;
import io.converge.core.Envelope;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The outbox relay's RocketMQ sink on two broker groups (masters {@code ops/deploy/rocketmq/2m/broker-a} and
 * {@code broker-b}) under load, broker-a killed (Runtime.halt) mid-load and
 * restarted on its store: every committed unit is delivered, no rolled-back one; while broker-a is down the
 * relay goes on delivering the keys whose queue is on broker-b (a key's queue is fixed by its hash, so the
 * keys of broker-a wait for it, or for the client's next route refresh, up to 30 s, which moves them to the
 * live group), nothing is parked and no attempt is counted. Delivery is at least once: the consumer dedups
 * by message id and the duplicates are counted.
 */
class RelayFailoverIT {

  private static final int QUEUES = 4;

  @AutoClose
  private static EmbeddedRocketMQCluster cluster;
  private static DataSource ds;

  @BeforeAll
  static void start() {
    long t0 = System.nanoTime();
    ds = RelayFixture.newOutbox(); // PostgreSQL first, before the brokers' JVMs compete for the CPU
    long t1 = System.nanoTime();
    // broker-a in a JVM of its own (it is killed), broker-b in the test's
    cluster = EmbeddedRocketMQCluster.builder().broker("2m/broker-a.properties")
        .brokerInThisJvm("2m/broker-b.properties").queuesPerBroker(QUEUES).build().start();
    System.out.printf("Relay failover: database %d ms, cluster start %d ms%n", (t1 - t0) / 1_000_000,
        (System.nanoTime() - t1) / 1_000_000);
  }

  @Test
  void aKilledMasterLosesNoCommittedRecordAndTheLiveGroupKeepsDelivering() throws Exception {
    String topic = RocketMQExtension.uniqueTopic("relayfailover");
    cluster.createTopic(topic);
    Set<String> committed = ConcurrentHashMap.newKeySet();
    Set<String> rolledBack = ConcurrentHashMap.newKeySet();
    AtomicInteger units = new AtomicInteger();
    AtomicBoolean writing = new AtomicBoolean(true);
    RocketMQSink sink = RocketMQSink.nameServer(cluster.nameServerAddress())
        .group(RocketMQExtension.uniqueTopic("relay")).sendTimeout(Duration.ofSeconds(1)).build();
    try (RecordingConsumer consumer = RecordingConsumer.start(cluster, topic);
        TxnProducer producer = RelayFixture.producer(ds);
        OutboxRelay relay = RelayFixture.relay(ds, sink).build()) {
      relay.start();
      Thread writer = new Thread(() -> {
        while (writing.get()) {
          int n = units.incrementAndGet();
          try {
            committed.add(producer.inTransaction(tx -> {
              String id = tx.publish(OutgoingMessage.builder(topic).key("account-" + n % 16)
                  .payload(("unit " + n).getBytes(UTF_8)).build());
              if (n % 5 == 0) {
                rolledBack.add(id);
                throw new IllegalStateException("the unit rolls back");
              }
              return id;
            }));
          } catch (IllegalStateException e) {
            // rolled back: its id is in rolledBack
          }
        }
      });
      writer.start();
      await().atMost(Duration.ofSeconds(30)).until(() -> units.get() >= 60);
      await().atMost(Duration.ofSeconds(30)).until(() -> delivered(consumer).size() >= 40);

      cluster.kill("broker-a");
      long killedAt = System.nanoTime();
      String addressOfB = cluster.brokerAddress("broker-b");
      int storedOnBBefore = storedOn(consumer, addressOfB);
      int atKill = units.get();
      // the live group keeps delivering: new records on broker-b arrive while broker-a is down
      await().atMost(Duration.ofSeconds(30)).until(() -> units.get() >= atKill + 30
          && storedOn(consumer, addressOfB) >= storedOnBBefore + 10);
      int deliveredWhileDown = storedOn(consumer, addressOfB) - storedOnBBefore;
      assertThat(cluster.isRunning("broker-a")).isFalse();
      assertThat(Outbox.on(ds).parkedCount()).as("an outage of one group parks nothing").isZero();

      cluster.start("broker-a");
      long downMs = (System.nanoTime() - killedAt) / 1_000_000;
      int atRestart = units.get();
      await().atMost(Duration.ofSeconds(30)).until(() -> units.get() >= atRestart + 40);
      writing.set(false);
      writer.join();

      await().atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> assertThat(delivered(consumer).keySet()).containsAll(committed));
      await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> true);
      Map<String, List<MessageExt>> delivered = delivered(consumer);
      assertThat(delivered.keySet()).as("delivered iff committed").containsExactlyInAnyOrderElementsOf(committed)
          .doesNotContainAnyElementsOf(rolledBack);
      assertThat(Outbox.on(ds).parkedCount()).isZero();
      int duplicates = consumer.received().size() - delivered.size();
      // the numbers of the report (test output)
      System.out.printf("Relay failover: %d units, %d committed, %d rolled back, %d delivered through broker-b while"
          + " broker-a was down (%d ms), %d duplicate deliveries%n", units.get(), committed.size(), rolledBack.size(),
          deliveredWhileDown, downMs, duplicates);
    }
  }

  private static Map<String, List<MessageExt>> delivered(RecordingConsumer consumer) {
    return consumer.byId(m -> m.getUserProperty(Envelope.MESSAGE_ID));
  }

  private static int storedOn(RecordingConsumer consumer, String address) {
    return (int) consumer.received().stream().filter(m -> m.getStoreHost().toString().endsWith(address)).count();
  }
}
