package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQCluster;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.rocketmq.common.message.MessageExt;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The controller mode of {@code ops/deploy/rocketmq/controller}, started from its files: one controller
 * ({@code controller-n0}, a group of one) and broker group a as two replicas ({@code broker-a-n0}, {@code
 * broker-a-n1}), each in a JVM of its own. The controller elects the master; the master is killed
 * ({@code Runtime.halt}) with two units open whose half messages it acknowledged (so, with
 * {@code allAckInSyncStateSet}, the other replica has them): the controller elects the other replica by
 * itself. Alone in its sync state set it refuses sends ({@code minInSyncReplicas=2}) until the lost replica is
 * back; then its check-back resolves the two units from the transaction log (COMMIT for the one that
 * committed while no master could take its END, a ROLLBACK fence for the one that rolled back). Every unit
 * that committed is delivered, no rolled-back one; duplicates are counted, not assumed away. A command
 * ({@code -Dconverge.long=true}, about 60 s on a loaded 2-core machine): the suite starts the same files in
 * {@code ControllerModeIT} (broker-embedded).
 */
@EnabledIfSystemProperty(named = "converge.long", matches = "true", disabledReason = "a command, not in the suite"
    + " (about 60 s on a loaded machine; ControllerModeIT of broker-embedded starts the files in the suite): run it"
    + " with -Dconverge.long=true")
class ControllerFailoverIT {

  @AutoClose
  private static EmbeddedRocketMQCluster cluster;
  private static OrdersTable orders;

  @BeforeAll
  static void start() {
    orders = OrdersTable.create("rmqcontroller");
    long t0 = System.nanoTime();
    cluster = EmbeddedRocketMQCluster.builder().controller("controller/controller-n0.properties")
        .broker("controller/broker-a-n0.properties").broker("controller/broker-a-n1.properties")
        .transactionChecks(Duration.ofMillis(500), Duration.ofSeconds(1), 60).build().start();
    System.out.printf("Controller failover: cluster start %d ms%n", (System.nanoTime() - t0) / 1_000_000);
  }

  @Test
  void theControllerElectsTheReplicaOfALostMasterAndItsCheckBackResolvesTheOpenUnits() throws Exception {
    String first = cluster.master("broker-a");
    assertThat(first).as("the master the controller elected").isIn("broker-a-n0", "broker-a-n1");
    String second = first.equals("broker-a-n0") ? "broker-a-n1" : "broker-a-n0";
    String topic = RocketMQExtension.uniqueTopic("ctrl");
    String group = RocketMQExtension.uniqueTopic("g");
    cluster.createTopic(topic);
    Set<String> all = ConcurrentHashMap.newKeySet(); // polled on Awaitility's thread too
    Set<String> rolledBack = new HashSet<>();
    try (RecordingConsumer consumer = RecordingConsumer.start(cluster, topic);
        TxnProducer producer = producer(group, topic)) {
      // minInSyncReplicas=2: the master refuses sends until the other replica is in its sync state set
      awaitCommit(producer, topic, all, Duration.ofSeconds(30));
      for (int i = 0; i < 10; i++) {
        String id = unitOrRollback(producer, topic, i % 3 == 2);
        all.add(id);
        if (i % 3 == 2) {
          rolledBack.add(id);
        }
      }
      FailoverUnits.OpenAcrossKill open = FailoverUnits.openAcrossKill(producer, topic, 3, null);
      open.expect(all, rolledBack);
      open.awaitPrepared();
      long killedAt = System.nanoTime();
      cluster.kill(first);
      open.killed();
      assertThat(open.commitOutcome()).isEqualTo("committed"); // its END found no master
      assertThat(open.rollbackOutcome()).isEqualTo("rolled back");

      await("the controller elects " + second).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
          .until(() -> second.equals(cluster.master("broker-a")));
      long switchedMs = (System.nanoTime() - killedAt) / 1_000_000;
      // a second instance of the group, as a service runs: it takes the new route at once and registers with
      // the new master, which checks back through it (a running instance waits for its route refresh, 30 s)
      try (TxnProducer replica = producer(group, topic)) {
        // minInSyncReplicas=2: the new master alone refuses sends (and the messages of END COMMITs) until a
        // second replica is in its sync state set again
        String refusedId = MessageIds.shared().next();
        all.add(refusedId);
        assertThatThrownBy(() -> unitOrRollback(replica, topic, refusedId, false))
            .as("a send to the new master while it is the only replica in sync")
            .isInstanceOf(BrokerUnavailableException.class);
        cluster.start(first); // the lost replica back on its store: it rejoins as a slave
        long t0 = System.nanoTime();
        awaitCommit(replica, topic, all, Duration.ofSeconds(60)); // it catches up, then joins the sync state set
        long firstCommitMs = (System.nanoTime() - t0) / 1_000_000;
        Set<String> committed = committedOrders(all);
        assertThat(committed).containsAll(open.committing).doesNotContainAnyElementsOf(rolledBack);
        await("every committed unit delivered, the open ones resolved").atMost(Duration.ofSeconds(30))
            .untilAsserted(() -> {
              assertThat(consumer.byId(m -> m.getUserProperty(Envelope.MESSAGE_ID)).keySet()).containsAll(committed);
              assertThat(fenced(open.rollingBack)).as("ROLLBACK fences of the new master's check-back")
                  .containsExactlyInAnyOrderElementsOf(open.rollingBack);
            });
        long resolvedMs = (System.nanoTime() - killedAt) / 1_000_000;
        // what a check-back could still deliver late: give the new master's next scans a chance to
        await().pollDelay(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> true);
        Map<String, List<MessageExt>> delivered = consumer.byId(m -> m.getUserProperty(Envelope.MESSAGE_ID));
        assertThat(delivered.keySet()).as("delivered iff committed").containsExactlyInAnyOrderElementsOf(committed);
        System.out.printf("Controller failover: %d units, %d committed; master %s killed, %s elected %d ms later;"
            + " %s restarted, first commit %d ms after that; open units resolved %d ms after the kill; %d duplicate"
            + " deliveries%n", all.size(), committed.size(), first, second, switchedMs, first, firstCommitMs,
            resolvedMs,
            consumer.received().size() - delivered.size());
      }
    }
  }

  private static TxnProducer producer(String group, String topic) {
    return TxnProducer.builder().group(group).dataSource(orders.db())
        .backend(RocketMQBackend.nameServer(cluster.nameServerAddress())).topics(topic)
        .localTransactionTimeout(Duration.ofSeconds(5)).build();
  }

  /** Retries a committing unit until one commits (a refused send rolls its unit back). */
  private static void awaitCommit(TxnProducer producer, String topic, Set<String> all, Duration atMost) {
    AtomicReference<RuntimeException> last = new AtomicReference<>();
    try {
      await().atMost(atMost).pollInterval(Duration.ofMillis(200)).until(() -> {
        String id = MessageIds.shared().next();
        all.add(id);
        try {
          unitOrRollback(producer, topic, id, false);
          return true;
        } catch (RuntimeException e) {
          last.set(e); // refused (no master yet, or its replica not in sync): the unit rolled back
          return false;
        }
      });
    } catch (ConditionTimeoutException e) {
      StringBuilder causes = new StringBuilder();
      for (Throwable t = last.get(); t != null; t = t.getCause()) {
        causes.append("\n  ").append(t);
      }
      throw new AssertionError("no unit committed within " + atMost + "; the last refusal:" + causes
          + "\nbroker-a-n0:\n" + cluster.output("broker-a-n0") + "\nbroker-a-n1:\n" + cluster.output("broker-a-n1"), e);
    }
  }

  private static String unitOrRollback(TxnProducer producer, String topic, boolean rollback) {
    String id = MessageIds.shared().next();
    try {
      unitOrRollback(producer, topic, id, rollback);
    } catch (IllegalStateException e) {
      // rolled back as asked
    }
    return id;
  }

  private static void unitOrRollback(TxnProducer producer, String topic, String id, boolean rollback) {
    producer.inTransaction(tx -> {
      OrdersTable.insert(tx.connection(), id);
      tx.publish(OutgoingMessage.builder(topic).id(id).payload("unit".getBytes(UTF_8)).build());
      if (rollback) {
        throw new IllegalStateException("the unit rolls back");
      }
      return null;
    });
  }

  private static Set<String> committedOrders(Set<String> ids) throws Exception {
    return FailoverUnits.withOutcome(orders.db(), ids, "COMMITTED");
  }

  private static Set<String> fenced(List<String> ids) throws Exception {
    return FailoverUnits.withOutcome(orders.db(), ids, "ROLLED_BACK");
  }
}
