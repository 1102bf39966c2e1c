package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.RelayFixture.CountingSink;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The broker is stopped for 10 s while messages keep being committed: units of work keep committing,
 * the relay backs off (a bounded number of send attempts, no busy loop, nothing parked), and once the
 * broker is back every committed message is delivered without anyone restarting the relay.
 */
@ExtendWith({RocketMQExtension.class, RelayBed.Extension.class})
class BrokerOutageIT {

  private static final Duration OUTAGE = Duration.ofSeconds(10);

  @Test
  void everythingCommittedDuringAnOutageIsDeliveredAfterIt(RelayBed bed) throws Exception {
    EmbeddedRocketMQ mq = bed.mq;
    CountingSink sink = new CountingSink(bed.sink().build());
    List<String> committed = new CopyOnWriteArrayList<>();
    AtomicBoolean writing = new AtomicBoolean(true);
    try (OutboxRelay relay = bed.relay(sink).maxAttempts(2).build()) {
      relay.start();
      Thread writer = new Thread(() -> {
        int i = 0;
        while (writing.get()) {
          committed.add(bed.publish("account-" + (i++ % 10)));
          try {
            Thread.sleep(10); // the writer's pace (a steady trickle of units of work), not a wait for anything
          } catch (InterruptedException e) {
            return;
          }
        }
      });
      writer.start();
      await().atMost(Duration.ofSeconds(30)).until(() -> committed.size() >= 100);
      bed.deliveries.awaitAll(List.copyOf(committed), Duration.ofSeconds(30));

      mq.stopBroker();
      int callsBefore = sink.calls.get();
      int failuresBefore = sink.failures.get();
      int committedBefore = committed.size();
      // the outage lasts 10 s; all along, nothing is parked and no attempt is counted
      await().during(OUTAGE).atMost(OUTAGE.plusSeconds(10)).pollInterval(Duration.ofMillis(500))
          .failFast("an outage parks nothing and counts no attempt",
              () -> bed.count("attempts > 0 OR parked_at IS NOT NULL") > 0)
          .until(() -> true);
      int failedDuringOutage = sink.failures.get() - failuresBefore;
      int committedDuringOutage = committed.size() - committedBefore;
      mq.startBroker();
      // writing goes on until the relay delivers what was committed after the broker came back
      int committedAtRestart = committed.size();
      await().atMost(Duration.ofSeconds(90)).until(() -> committed.size() > committedAtRestart + 20
          && bed.deliveries.ids().contains(committed.get(committedAtRestart + 20)));
      writing.set(false);
      writer.join();

      bed.deliveries.awaitAll(List.copyOf(committed), Duration.ofSeconds(90));
      System.out.printf("outage: %d committed during 10 s, %d failed sends (%d calls), %d delivered in all (%d ids)%n",
          committedDuringOutage, failedDuringOutage, sink.calls.get() - callsBefore, bed.deliveries.raw().size(),
          committed.size());
      assertThat(committedDuringOutage).as("units of work commit while the broker is down").isGreaterThan(100);
      assertThat(failedDuringOutage).as("backoff, not a busy loop").isPositive().isLessThan(60);
      assertThat(Outbox.on(bed.ds).parkedCount()).as("an outage never parks a key").isZero();
      assertThat(bed.count("attempts > 0")).as("an outage counts no attempt").isZero();
    }
  }
}
