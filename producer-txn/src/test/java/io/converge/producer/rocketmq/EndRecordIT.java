package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.spi.CrashPoints;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.jdbc.core.JdbcTemplate;

/** The rows of converge_txn_end against the real broker: a unit recorded waiting ends resolved when it ends. */
@ExtendWith(RocketMQExtension.class)
class EndRecordIT {

  private static final OrdersTable orders = OrdersTable.create("endrecord");

  /**
   * Issue 17 (review, major): the broker checks back a unit still open (young, no log row: UNKNOWN), which is
   * recorded waiting; the unit then commits and its END COMMIT succeeds. The row must end RESOLVED: it stayed
   * WAITING before (a false stuck unit on the console and in converge.stuck until the purge). Check-backs after
   * the first are held until the row is resolved, so that only the END can resolve it (the test broker scans
   * every 500 ms: a check-back racing the END would answer COMMIT and resolve the row itself).
   */
  @Test
  void aUnitCheckedBackOpenThenEndedIsResolved(EmbeddedRocketMQ mq) throws Exception {
    String topic = RocketMQExtension.uniqueTopic("endrec");
    mq.createTopic(topic);
    JdbcTemplate db = new JdbcTemplate(orders.db());
    String id = MessageIds.shared().next();
    CountDownLatch resolved = new CountDownLatch(1);
    AtomicInteger checks = new AtomicInteger();
    CrashPoints.install(point -> {
      if (point == CrashPoints.Point.CHECK_BACK && checks.incrementAndGet() > 1) {
        awaitQuietly(resolved);
      }
    });
    try (TxnProducer p = TxnProducer.builder().group(RocketMQExtension.uniqueTopic("g")).dataSource(orders.db())
        .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics(topic)
        .localTransactionTimeout(Duration.ofSeconds(30)).build()) {
      p.inTransaction(tx -> {
        OrdersTable.insert(tx.connection(), id);
        tx.publish(OutgoingMessage.builder(topic).id(id).payload("open".getBytes(UTF_8)).build());
        // the broker's check-back (after its 1 s transaction timeout) finds the unit open: recorded waiting
        await("the check-back recorded the open unit").atMost(Duration.ofSeconds(20))
            .until(() -> status(db, id), s -> "WAITING UNKNOWN".equals(s));
        return null;
      });
      await("the END resolved the row").atMost(Duration.ofSeconds(10))
          .until(() -> status(db, id), s -> s != null && s.startsWith("RESOLVED"));
    } finally {
      resolved.countDown();
      CrashPoints.install(null);
    }
    assertThat(db.queryForObject("SELECT resolved_at IS NOT NULL FROM converge_txn_end WHERE message_id = ?",
        Boolean.class, id)).isTrue();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String status(JdbcTemplate db, String id) {
    return db.query("SELECT status || ' ' || coalesce(answer, '-') FROM converge_txn_end WHERE message_id = ?",
        rs -> rs.next() ? rs.getString(1) : null, id);
  }
}
