package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.CrashPoints;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;
import org.springframework.jdbc.core.JdbcTemplate;

/** The rows of converge_txn_end against the real broker: a unit recorded waiting ends resolved when it ends. */
@ExtendWith(RocketMQExtension.class)
@Isolated // its crash-point hooks hold every check-back of the JVM
class EndRecordIT {

  private static final OrdersTable orders = OrdersTable.create("endrecord");
  private static final JdbcTemplate db = new JdbcTemplate(orders.db());
  private static final String KEY = "k-endrecord";

  /**
   * Issue 17 (review, major): the broker checks back a unit still open (young, no log row: UNKNOWN), which is
   * recorded waiting; the unit then commits and its END COMMIT succeeds. The row must end RESOLVED: it stayed
   * WAITING before (a false stuck unit on the console and in converge.stuck until the purge). Check-backs after
   * the first are held until the row is resolved, so that only the END can resolve it (the test broker scans
   * every 500 ms: a check-back racing the END would answer COMMIT and resolve the row itself).
   */
  @Test
  void aUnitCheckedBackOpenThenEndedIsResolved(EmbeddedRocketMQ mq) throws Exception {
    String topic = topic(mq);
    String id = MessageIds.shared().next();
    CountDownLatch resolved = new CountDownLatch(1);
    AtomicInteger checks = new AtomicInteger();
    CrashPoints.install(point -> {
      if (point == CrashPoints.Point.CHECK_BACK && checks.incrementAndGet() > 1) {
        Latches.awaitQuietly(resolved, Duration.ofSeconds(30));
      }
    });
    try (TxnProducer p = producer(mq, topic)) {
      p.inTransaction(tx -> {
        OrdersTable.insert(tx.connection(), id);
        tx.publish(OutgoingMessage.builder(topic).id(id).payload("open".getBytes(UTF_8)).build());
        // the broker's check-back (after its 1 s transaction timeout) finds the unit open: recorded waiting
        await("the check-back recorded the open unit").atMost(Duration.ofSeconds(20))
            .until(() -> status(id), s -> "WAITING UNKNOWN".equals(s));
        return null;
      });
      await("the END resolved the row").atMost(Duration.ofSeconds(10))
          .until(() -> status(id), s -> s != null && s.startsWith("RESOLVED"));
    } finally {
      resolved.countDown();
      CrashPoints.install(null);
    }
    assertThat(db.queryForObject("SELECT resolved_at IS NOT NULL FROM converge_txn_end WHERE message_id = ?",
        Boolean.class, id)).isTrue();
  }

  /**
   * Issue 17 (review, major): the broker applies an END COMMIT but its answer is lost (a hook throws after it):
   * the row is recorded waiting, and no check-back will come (the half message is ended). The follow-up finds the
   * real message in its topic and resolves the row; it stayed WAITING before. Check-backs are held meanwhile. The
   * message is stored once: the failed END COMMIT is never sent again (the broker would write it a second time).
   * A marker unit of the same key (the same queue), committed after the row is resolved, shows nothing came later.
   */
  @Test
  void anEndCommitAppliedWhoseAnswerWasLostIsResolved(EmbeddedRocketMQ mq) throws Exception {
    String topic = topic(mq);
    try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
      String id = answerLost(mq, topic, false);
      String marker = MessageIds.shared().next();
      try (TxnProducer p = producer(mq, topic)) {
        p.inTransaction(tx -> {
          OrdersTable.insert(tx.connection(), marker);
          tx.publish(OutgoingMessage.builder(topic).id(marker).key(KEY).payload("marker".getBytes(UTF_8)).build());
          return null;
        });
      }
      consumer.await(m -> marker.equals(m.getUserProperty(Envelope.MESSAGE_ID)), 1, Duration.ofSeconds(30));
      assertThat(consumer.received(m -> id.equals(m.getUserProperty(Envelope.MESSAGE_ID))))
          .as("the real message, stored once").hasSize(1);
    }
  }

  /** The same for an END ROLLBACK: it is sent again (a second END ROLLBACK only marks the half message again). */
  @Test
  void anEndRollbackAppliedWhoseAnswerWasLostIsResolved(EmbeddedRocketMQ mq) throws Exception {
    answerLost(mq, topic(mq), true);
  }

  // the message id of the unit whose END's answer was lost
  private static String answerLost(EmbeddedRocketMQ mq, String topic, boolean rollback) throws Exception {
    String id = MessageIds.shared().next();
    CountDownLatch resolved = new CountDownLatch(1);
    AtomicInteger answers = new AtomicInteger();
    CrashPoints.install(point -> {
      if (point == CrashPoints.Point.CHECK_BACK) {
        Latches.awaitQuietly(resolved, Duration.ofSeconds(30));
      } else if (point == CrashPoints.Point.BROKER_END_ANSWERED && answers.incrementAndGet() == 1) {
        throw new IllegalStateException("the END's answer was lost (test)");
      }
    });
    try (TxnProducer p = producer(mq, topic)) {
      try {
        p.inTransaction(tx -> {
          OrdersTable.insert(tx.connection(), id);
          tx.publish(OutgoingMessage.builder(topic).id(id).key(KEY).payload("lost".getBytes(UTF_8)).build());
          if (rollback) {
            throw new IllegalArgumentException("the unit fails (test)");
          }
          return null;
        });
      } catch (IllegalArgumentException expected) {
        assertThat(rollback).isTrue();
      }
      await("the failed END recorded").atMost(Duration.ofSeconds(10))
          .until(() -> endState(id), s -> s != null);
      await("the follow-up resolved the row").atMost(Duration.ofSeconds(15))
          .until(() -> status(id), s -> s != null && s.startsWith("RESOLVED"));
      assertThat(endState(id)).isEqualTo(rollback ? "ROLLBACK" : "COMMIT");
    } finally {
      resolved.countDown();
      CrashPoints.install(null);
    }
    return id;
  }

  private static String endState(String id) {
    return db.query("SELECT end_state FROM converge_txn_end WHERE message_id = ?",
        rs -> rs.next() ? rs.getString(1) : null, id);
  }

  private static String topic(EmbeddedRocketMQ mq) {
    String topic = RocketMQExtension.uniqueTopic("endrec");
    mq.createTopic(topic);
    return topic;
  }

  /** A producer whose units may stay open 30 s (a young unit without a log row is checked back UNKNOWN). */
  private static TxnProducer producer(EmbeddedRocketMQ mq, String topic) {
    return TxnProducer.builder().group(RocketMQExtension.uniqueTopic("g")).dataSource(orders.db())
        .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics(topic)
        .localTransactionTimeout(Duration.ofSeconds(30)).build();
  }

  private static String status(String id) {
    return db.query("SELECT status || ' ' || coalesce(answer, '-') FROM converge_txn_end WHERE message_id = ?",
        rs -> rs.next() ? rs.getString(1) : null, id);
  }
}
