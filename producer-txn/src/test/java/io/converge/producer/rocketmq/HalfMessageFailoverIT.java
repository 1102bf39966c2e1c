package io.converge.producer.rocketmq;

import io.converge.core.rocketmq.KeyQueueSelector;
import io.converge.core.rocketmq.RocketMQClients;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQCluster;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;
import org.apache.rocketmq.common.topic.TopicValidator;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.header.EndTransactionRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.QueryConsumerOffsetRequestHeader;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The half-message backend on two broker groups: group a a
 * {@code SYNC_MASTER} with its slave ({@code ops/deploy/rocketmq/2m-2s-sync/broker-a}, {@code broker-a-s}),
 * group b a single master ({@code 2m/broker-b}); the master of a runs in a JVM of its own (it is killed), the
 * others in the test's. Under load the master of a is killed (Runtime.halt) with its
 * slave alive, then restarted on its store: every committed unit is delivered, no rolled-back one; the
 * senders go on through broker-b while a has no master; the slave refuses END ({@code SLAVE_NOT_AVAILABLE});
 * the restarted master's check-back resolves its half messages from the transaction log (COMMIT for a unit
 * that committed while its ENDs could not reach a master, a ROLLBACK fence for one that rolled back). Delivery is at least once: the consumer dedups by message id and the
 * duplicates are counted, never assumed away. The truth is the database: a message's unit committed iff its
 * transaction-log row is COMMITTED (written in the unit's transaction, with the order row).
 *
 * <p>A half message of the unit that rolls back across the kill is resolved on the restarted master by whichever
 * ROLLBACK reaches it first, and both are right: its check-back (answered from the log: a {@code ROLLED_BACK} fence)
 * or the producer's own END ROLLBACK, which {@link FailedEnds} sends again 1 s, 5 s and 30 s after each failure (a
 * second END ROLLBACK only marks the half message ended again). Once it has taken the END the broker never checks the
 * message back, so no fence is ever written for it: the test accepts either, read from the database (the fence, or
 * the message's {@code converge_txn_end} row resolved by an END, without a check-back's answer), and prints how many
 * each resolved. Which one wins is a race: the check-back comes at the master's first scan (every
 * {@link #CHECK_INTERVAL}) after an instance of the group registers with it (the producer when it connects to it
 * again, its client heartbeats each new connection, else at its 30 s heartbeat; the replica below at once), the
 * retries run 1 s, 6 s and 36 s after the kill, one after another on one thread behind the COMMIT follow-ups' look-ups
 * (slow on a loaded machine). Seen: in a run that restarted broker-a at once, the four fences 0.7 s before the
 * retried ENDs were taken; on main under load, three fences and never a check-back of the fourth; with the
 * check-back held off (a {@code transactionTimeOut} of 60 s), the four ended by the retried END and no fence. The
 * fence alone was asserted before, and 2 of 5 loaded runs failed on it. A half message resolved by neither (no check-back
 * answered and no END taken, e.g. discarded by the broker after {@link #CHECK_MAX} checks) still fails the test, and
 * "delivered iff committed" below proves that none was delivered, whichever way it was resolved.
 */
class HalfMessageFailoverIT {

  private static final int QUEUES = 4;
  /** The test cluster's check-back scan interval (the files': 30 s). */
  private static final Duration CHECK_INTERVAL = Duration.ofMillis(500);
  /**
   * How often the restarted master checks a half message back before it discards it ({@code transactionCheckMax};
   * the broker also counts a check that found no registered instance of the group, and a discarded half message is
   * never delivered, committed or not): two heartbeats of a running producer ({@code heartbeatBrokerInterval},
   * 30 s) at {@link #CHECK_INTERVAL}, so that an instance that sends nothing to the restarted master registers in
   * time, as in the files (15 checks every 30 s). 60 checks at 500 ms left 30 s, one heartbeat, with no margin.
   */
  private static final int CHECK_MAX = (int) (2 * new ClientConfig().getHeartbeatBrokerInterval()
      / CHECK_INTERVAL.toMillis());

  private static final String ENDED_BY_ROLLBACK = """
      SELECT message_id FROM converge_txn_end
      WHERE message_id = ANY (?) AND status = 'RESOLVED' AND answer IS DISTINCT FROM 'ROLLBACK'
      """;

  @AutoClose
  private static EmbeddedRocketMQCluster cluster;
  private static OrdersTable orders;

  @BeforeAll
  static void start() throws Exception {
    long t0 = System.nanoTime();
    orders = OrdersTable.create("rmqfailover"); // PostgreSQL first, before the brokers' JVMs compete for the CPU
    long t1 = System.nanoTime();
    // the files' check-back timing (first check at 6 s, every 30 s, for 7.5 min) is shortened, nothing else
    cluster = EmbeddedRocketMQCluster.builder().broker("2m-2s-sync/broker-a.properties")
        .brokerInThisJvm("2m-2s-sync/broker-a-s.properties").brokerInThisJvm("2m/broker-b.properties")
        .queuesPerBroker(QUEUES).transactionChecks(CHECK_INTERVAL, Duration.ofSeconds(1), CHECK_MAX).build().start();
    System.out.printf("Half-message failover: database %d ms, cluster start %d ms%n", (t1 - t0) / 1_000_000,
        (System.nanoTime() - t1) / 1_000_000);
  }

  @Test
  void aKilledMasterLosesNoCommittedUnitAndDeliversNoRolledBackOne() throws Exception {
    String topic = RocketMQExtension.uniqueTopic("failover");
    String group = RocketMQExtension.uniqueTopic("g");
    cluster.createTopic(topic);
    awaitSlaveOfA(topic);
    Set<String> all = ConcurrentHashMap.newKeySet(); // every message id a unit published or tried to
    Set<String> rolledBack = ConcurrentHashMap.newKeySet();
    AtomicInteger failed = new AtomicInteger();
    AtomicInteger committedWhileDown = new AtomicInteger();
    AtomicBoolean down = new AtomicBoolean();
    try (RecordingConsumer consumer = RecordingConsumer.start(cluster, topic);
        TxnProducer producer = producer(group, topic)) {
      AtomicBoolean loading = new AtomicBoolean(true);
      AtomicInteger units = new AtomicInteger();
      ExecutorService load = Executors.newFixedThreadPool(4);
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        workers.add(load.submit(() -> {
          while (loading.get()) {
            int n = units.incrementAndGet();
            String id = MessageIds.shared().next();
            all.add(id);
            boolean wasDown = down.get();
            try {
              producer.inTransaction(tx -> {
                OrdersTable.insert(tx.connection(), id);
                tx.publish(OutgoingMessage.builder(topic).id(id).payload(("unit " + n).getBytes(UTF_8)).build());
                if (n % 5 == 0) {
                  throw new IllegalStateException("the unit rolls back");
                }
                return null;
              });
              if (wasDown && down.get()) {
                committedWhileDown.incrementAndGet();
              }
            } catch (IllegalStateException e) {
              rolledBack.add(id);
            } catch (RuntimeException e) {
              failed.incrementAndGet(); // e.g. both send attempts met the dead broker: the unit rolled back
            }
          }
          return null;
        }));
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> units.get() >= 60);

      // two units open across the kill, each with half messages on broker-a (keys of broker-a's queues)
      List<String> keysOfA = keysOfBroker(0);
      FailoverUnits.OpenAcrossKill open = FailoverUnits.openAcrossKill(producer, topic, 4, keysOfA);
      open.expect(all, rolledBack);
      open.awaitPrepared();
      long killedAt = System.nanoTime();
      cluster.kill("broker-a");
      down.set(true);
      open.killed();
      assertThat(endOnSlave(group, topic)).as("END sent to the slave of broker-a")
          .isEqualTo(ResponseCode.SLAVE_NOT_AVAILABLE);
      open.commitOutcome();
      assertThat(open.rollbackOutcome()).isEqualTo("rolled back");
      int atKill = units.get();
      await().atMost(Duration.ofSeconds(30)).until(() -> units.get() >= atKill + 40);

      cluster.start("broker-a");
      down.set(false);
      long restartedAt = System.nanoTime();
      await().atMost(Duration.ofSeconds(30)).until(() -> units.get() >= atKill + 60);
      loading.set(false);
      for (Future<?> f : workers) {
        f.get(30, TimeUnit.SECONDS);
      }
      load.shutdown();

      Set<String> committed = committedOrders(all);
      assertThat(committed).containsAll(open.committing).doesNotContainAnyElementsOf(rolledBack);
      // a lone instance would answer the restarted broker after its next heartbeat (up to 30 s); a second
      // instance of the group, as a service runs, registers at once (see ops/deploy/README.md)
      DefaultMQProducer plain = RocketMQClients.startProducer(cluster.nameServerAddress(),
          RocketMQExtension.uniqueTopic("plain")); // broker-side checks and markers below
      try (TxnProducer replica = producer(group, topic)) {
        // 2.5 s on a quiet machine; 30 s ran out once with the machine's two cores shared by four builds
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
          assertThat(consumer.byId(m -> m.getUserProperty(Envelope.MESSAGE_ID)).keySet()).containsAll(committed);
          Set<String> resolved = new HashSet<>(fenced(open.rollingBack));
          resolved.addAll(endedByRollback(open.rollingBack));
          assertThat(resolved).as("rolled-back half messages resolved on the restarted broker-a: the ROLLBACK fence"
              + " of its check-back, or the producer's END ROLLBACK sent again").containsExactlyInAnyOrderElementsOf(
                  open.rollingBack);
        });
        int fencedByCheckBack = fenced(open.rollingBack).size();
        long resolvedMs = (System.nanoTime() - restartedAt) / 1_000_000;
        // nothing can be delivered late: no half message is left for a check-back on either master, and all
        // that was stored before a marker sent now to each queue has arrived
        long lateCheckFrom = System.nanoTime();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
            .until(() -> halfMessagesResolved(plain, "broker-a")
                && halfMessagesResolved(plain, "broker-b"));
        awaitEverythingBeforeMarkers(plain, consumer, topic);
        long lateCheckMs = (System.nanoTime() - lateCheckFrom) / 1_000_000;
        Map<String, List<MessageExt>> delivered = consumer.byId(m -> m.getUserProperty(Envelope.MESSAGE_ID));
        delivered.remove(null); // the markers
        assertThat(delivered.keySet()).as("delivered iff committed").containsExactlyInAnyOrderElementsOf(committed);
        String addressOfA = cluster.brokerAddress("broker-a");
        assertThat(open.committing).allSatisfy(id -> assertThat(delivered.get(id).get(0).getStoreHost().toString())
            .as("in-flight message %s stored by broker-a", id).endsWith(addressOfA));
        assertThat(committedWhileDown.get()).as("units committed through broker-b while broker-a had no master")
            .isGreaterThanOrEqualTo(20);
        int duplicates = (int) consumer.received().stream()
            .filter(m -> m.getUserProperty(Envelope.MESSAGE_ID) != null).count() - delivered.size();
        // the numbers of the report (test output)
        System.out.printf("Half-message failover: %d units, %d committed, %d rolled back, %d failed (send refused),"
            + " %d committed while broker-a was down (%d ms), %d duplicate deliveries, in-flight units resolved %d ms"
            + " after the restart (of %d rolled-back half messages %d fenced by a check-back, %d ended by an END"
            + " ROLLBACK sent again), no late delivery possible %d ms later%n",
            all.size(), committed.size(), rolledBack.size(), failed.get(), committedWhileDown.get(),
            (restartedAt - killedAt) / 1_000_000, duplicates, resolvedMs, open.rollingBack.size(), fencedByCheckBack,
            open.rollingBack.size() - fencedByCheckBack, lateCheckMs);
      } finally {
        plain.shutdown();
      }
    }
  }

  /**
   * A SYNC_MASTER refuses sends (SLAVE_NOT_AVAILABLE) until its slave has connected: wait for a unit whose
   * message goes to a queue of broker-a to commit.
   */
  private static void awaitSlaveOfA(String topic) {
    try (TxnProducer p = producer(RocketMQExtension.uniqueTopic("probe"), topic)) {
      String key = keysOfBroker(0).get(0);
      await().atMost(Duration.ofSeconds(30)).until(() -> {
        try {
          p.inTransaction(tx -> {
            tx.publish(OutgoingMessage.builder(topic).key(key).payload("probe".getBytes(UTF_8)).build());
            throw new IllegalStateException("accepted"); // the probe rolls back once its half message is stored
          });
          return false;
        } catch (IllegalStateException e) {
          return "accepted".equals(e.getMessage());
        } catch (RuntimeException e) {
          return false; // SLAVE_NOT_AVAILABLE: the slave has not connected yet
        }
      });
    }
  }

  /**
   * Whether broker {@code node}'s transaction check has passed every half message it stores: each has its END
   * (COMMIT or ROLLBACK, from the unit or from a check-back), so no check-back is left to deliver anything
   * later. A half message checked is put back at the end of the half queue, so the check's offset reaches the
   * queue's end only when every one is resolved.
   */
  private static boolean halfMessagesResolved(DefaultMQProducer client, String node) throws Exception {
    MQClientAPIImpl api = client.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl();
    String address = cluster.brokerAddress(node);
    long end = api.getMaxOffset(address,
        new MessageQueue(TopicValidator.RMQ_SYS_TRANS_HALF_TOPIC, cluster.brokerName(node), 0), 5_000);
    QueryConsumerOffsetRequestHeader header = new QueryConsumerOffsetRequestHeader();
    header.setConsumerGroup(MixAll.CID_SYS_RMQ_TRANS);
    header.setTopic(TopicValidator.RMQ_SYS_TRANS_HALF_TOPIC);
    header.setQueueId(0);
    long checked;
    try {
      checked = api.queryConsumerOffset(address, header, 5_000);
    } catch (MQBrokerException notYet) {
      checked = 0; // the check has not stored an offset yet
    }
    return checked >= end;
  }

  /**
   * Sends a plain marker to every queue of {@code topic} and waits until the consumer received every offset below
   * its marker's on each queue: all that was stored before the markers has arrived.
   */
  private static void awaitEverythingBeforeMarkers(DefaultMQProducer client, RecordingConsumer consumer, String topic)
      throws Exception {
    Map<String, Long> markers = new ConcurrentHashMap<>(); // broker/queue -> the marker's queue offset
    for (MessageQueue q : client.fetchPublishMessageQueues(topic)) {
      SendResult sent = client.send(new Message(topic, "marker".getBytes(UTF_8)), q);
      markers.put(q.getBrokerName() + "/" + q.getQueueId(), sent.getQueueOffset());
    }
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
      Map<String, Set<Long>> offsets = new java.util.HashMap<>();
      for (MessageExt m : consumer.received()) {
        offsets.computeIfAbsent(m.getBrokerName() + "/" + m.getQueueId(), k -> new HashSet<>())
            .add(m.getQueueOffset());
      }
      return markers.entrySet().stream().allMatch(e -> {
        Set<Long> got = offsets.getOrDefault(e.getKey(), Set.of());
        return java.util.stream.LongStream.rangeClosed(0, e.getValue()).allMatch(got::contains);
      });
    });
  }

  /** The answer of broker-a's slave to an END: it refuses any before reading it. */
  private static int endOnSlave(String group, String topic) throws Exception {
    DefaultMQProducer client = RocketMQClients.startProducer(cluster.nameServerAddress(),
        RocketMQExtension.uniqueTopic("end"));
    try {
      EndTransactionRequestHeader header = new EndTransactionRequestHeader();
      header.setTopic(topic);
      header.setProducerGroup(group);
      header.setTranStateTableOffset(0L);
      header.setCommitLogOffset(0L);
      header.setCommitOrRollback(MessageSysFlag.TRANSACTION_COMMIT_TYPE);
      header.setMsgId("0");
      header.setTransactionId("0");
      header.setBrokerName(cluster.brokerName("broker-a-s"));
      RemotingCommand response = client.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl()
          .getRemotingClient().invokeSync(cluster.brokerAddress("broker-a-s"),
              RemotingCommand.createRequestCommand(RequestCode.END_TRANSACTION, header), 5_000);
      return response.getCode();
    } finally {
      client.shutdown();
    }
  }

  private static TxnProducer producer(String group, String topic) {
    // localTransactionTimeout well inside the test cluster's check window (60 x 500 ms), as in the files
    return TxnProducer.builder().group(group).dataSource(orders.db())
        .backend(RocketMQBackend.nameServer(cluster.nameServerAddress())).topics(topic)
        .localTransactionTimeout(Duration.ofSeconds(5)).build();
  }

  /** Keys whose queue (hash modulo the 8 queues of the route, sorted by broker name) is on broker {@code index}. */
  private static List<String> keysOfBroker(int index) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; keys.size() < 4; i++) {
      if (KeyQueueSelector.index("k" + i, 2 * QUEUES) / QUEUES == index) {
        keys.add("k" + i);
      }
    }
    return keys;
  }

  /** The ids among {@code ids} whose unit committed: their log row, written in the unit's transaction. */
  private static Set<String> committedOrders(Set<String> ids) throws Exception {
    return FailoverUnits.withOutcome(orders.db(), ids, "COMMITTED");
  }

  private static Set<String> fenced(List<String> ids) throws Exception {
    return FailoverUnits.withOutcome(orders.db(), ids, "ROLLED_BACK");
  }

  /**
   * The ids among {@code ids} (of units that rolled back) whose END the broker took after the unit's first one
   * failed: their {@code converge_txn_end} row (written when the END failed, or by an earlier check-back answered
   * UNKNOWN) resolved by an END, not by a check-back, which writes its answer ROLLBACK.
   */
  private static Set<String> endedByRollback(List<String> ids) throws Exception {
    Set<String> found = new HashSet<>();
    try (Connection c = orders.db().getConnection();
        PreparedStatement ps = c.prepareStatement(ENDED_BY_ROLLBACK)) {
      ps.setArray(1, c.createArrayOf("text", ids.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          found.add(rs.getString(1));
        }
      }
    }
    return found;
  }
}
