package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.RelayFixture.CountingSink;
import io.converge.producer.TxnProducer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The broker is stopped for 10 s while messages keep being committed: units of work keep committing,
 * the relay backs off (a bounded number of send attempts, no busy loop, nothing parked), and once the
 * broker is back every committed message is delivered without anyone restarting the relay.
 */
@ExtendWith(RocketMQExtension.class)
class BrokerOutageIT {

  @Test
  void everythingCommittedDuringAnOutageIsDeliveredAfterIt(EmbeddedRocketMQ mq) throws Exception {
    DataSource ds = RelayFixture.newOutbox();
    String topic = RocketMQExtension.uniqueTopic("outage");
    mq.createTopic(topic);
    CountingSink sink = new CountingSink(RelayFixture.sink(mq).build());
    List<String> committed = new CopyOnWriteArrayList<>();
    AtomicBoolean writing = new AtomicBoolean(true);
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = RelayFixture.producer(ds);
        OutboxRelay relay = RelayFixture.relay(ds, sink).maxAttempts(2).build()) {
      relay.start();
      Thread writer = new Thread(() -> {
        int i = 0;
        while (writing.get()) {
          committed.add(RelayFixture.publish(p, topic, "account-" + (i++ % 10)));
          try {
            Thread.sleep(10);
          } catch (InterruptedException e) {
            return;
          }
        }
      });
      writer.start();
      Thread.sleep(2000);
      deliveries.awaitAll(List.copyOf(committed), Duration.ofSeconds(30));

      mq.stopBroker();
      int callsBefore = sink.calls.get();
      int failuresBefore = sink.failures.get();
      int committedBefore = committed.size();
      Thread.sleep(10_000);
      int failedDuringOutage = sink.failures.get() - failuresBefore;
      int committedDuringOutage = committed.size() - committedBefore;
      mq.startBroker();
      Thread.sleep(2000);
      writing.set(false);
      writer.join();

      deliveries.awaitAll(List.copyOf(committed), Duration.ofSeconds(90));
      System.out.printf("outage: %d committed during 10 s, %d failed sends (%d calls), %d delivered in all (%d ids)%n",
          committedDuringOutage, failedDuringOutage, sink.calls.get() - callsBefore, deliveries.raw().size(), committed.size());
      assertThat(committedDuringOutage).as("units of work commit while the broker is down").isGreaterThan(100);
      assertThat(failedDuringOutage).as("backoff, not a busy loop").isPositive().isLessThan(60);
      assertThat(Outbox.on(ds).parkedCount()).as("an outage never parks a key").isZero();
      assertThat(RelayFixture.count(ds, "attempts > 0")).as("an outage counts no attempt").isZero();
    }
  }
}
