package io.converge.producer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.producer.micrometer.MicrometerProducerMetrics;
import io.converge.core.Migrations;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.internal.TxnLog;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;

/** The check-back's answers from the transaction log on the real database (no broker needed to ask). */
class CheckBackListenerIT {

  /**
   * Issue 13.3: a half message re-checked after the log retention (a broker that lost the END, a long
   * outage) finds no row: its row may have been purged after a commit. UNKNOWN, counted, no fence.
   */
  @Test
  void aCheckBackPastTheRetentionIsUnknownCountedAndNotFenced() throws Exception {
    DataSource db = ConvergePostgres.shared().newSchema("checkback");
    Migrations.apply(db, "producer");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    TxnLog log = new TxnLog(db, Duration.ofDays(7));
    EndRecorder recorder = new EndRecorder(db, "g", io.converge.producer.spi.ProducerMetrics.NONE);
    CheckBackListener listener = new CheckBackListener(
        new BackendContext("g", db, log, Duration.ofSeconds(30), List.of(),
            new MicrometerProducerMetrics(registry, "g"), Clock.systemUTC()),
        recorder);
    String id = MessageIds.shared().next();
    MessageExt msg = new MessageExt();
    msg.setTopic("t");
    msg.putUserProperty(Envelope.MESSAGE_ID, id);
    msg.setBornTimestamp(System.currentTimeMillis()); // re-put half messages may look young to the broker
    msg.putUserProperty(Envelope.CREATED_AT, Long.toString(System.currentTimeMillis() - Duration.ofDays(8).toMillis()));

    assertThat(listener.checkLocalTransaction(msg)).isEqualTo(LocalTransactionState.UNKNOW);
    assertThat(log.outcome(id)).as("no ROLLBACK fence by guess").isEqualTo(TxnLog.Outcome.UNKNOWN);
    assertThat(registry.get("txn.checkbacks.past-retention").counter().count()).isEqualTo(1.0);
    recorder.close();
    assertThat(endRow(db, id)).as("the ticket says it").isNull();
  }

  /**
   * Issue 17.3: every check-back is recorded in converge_txn_end (the broker checks only half messages without
   * an END), off the unit's path: UNKNOWN leaves the unit waiting, COMMIT resolves it, and an END failure recorded
   * after the resolution (a late END refused) does not reopen it.
   */
  @Test
  void checkBacksAreRecordedWaitingUntilResolved() throws Exception {
    DataSource db = ConvergePostgres.shared().newSchema("checkbackrec");
    Migrations.apply(db, "producer");
    TxnLog log = new TxnLog(db, Duration.ofDays(7));
    EndRecorder recorder = new EndRecorder(db, "g", io.converge.producer.spi.ProducerMetrics.NONE);
    CheckBackListener listener = new CheckBackListener(new BackendContext("g", db, log, Duration.ofSeconds(30),
        List.of(), io.converge.producer.spi.ProducerMetrics.NONE, Clock.systemUTC()), recorder);
    String id = MessageIds.shared().next();
    MessageExt msg = new MessageExt();
    msg.setTopic("t");
    msg.putUserProperty(Envelope.MESSAGE_ID, id);
    msg.putUserProperty(Envelope.KEY, "k-1");
    msg.setBornTimestamp(System.currentTimeMillis());

    assertThat(listener.checkLocalTransaction(msg)).as("young, no row").isEqualTo(LocalTransactionState.UNKNOW);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> endRow(db, id) != null);
    assertThat(endRow(db, id)).isEqualTo("WAITING UNKNOWN 1 k-1");

    try (java.sql.Connection c = db.getConnection()) {
      log.recordCommitted(c, id, "g", "t");
    }
    assertThat(listener.checkLocalTransaction(msg)).isEqualTo(LocalTransactionState.COMMIT_MESSAGE);
    recorder.notDelivered(HalfMessageTransaction.half(msg, id, null), "COMMIT", "END COMMIT failed: late",
        java.time.Instant.now());
    recorder.close();
    assertThat(endRow(db, id)).isEqualTo("RESOLVED COMMIT 2 k-1");
  }

  private static String endRow(DataSource db, String id) throws java.sql.SQLException {
    try (java.sql.Connection c = db.getConnection();
        java.sql.PreparedStatement ps = c.prepareStatement(
            "SELECT status, answer, checks, msg_key FROM converge_txn_end WHERE message_id = ?")) {
      ps.setString(1, id);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) + " " + rs.getString(2) + " " + rs.getInt(3) + " " + rs.getString(4) : null;
      }
    }
  }
}
