package io.converge.producer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.producer.Envelope;
import io.converge.producer.MessageIds;
import io.converge.producer.MicrometerMetrics;
import io.converge.producer.schema.Migrations;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.TxnLog;
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
  void aCheckBackPastTheRetentionIsUnknownCountedAndNotFenced() {
    DataSource db = ConvergePostgres.shared().newSchema("checkback");
    Migrations.apply(db, "producer");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    TxnLog log = new TxnLog(db, Duration.ofDays(7));
    CheckBackListener listener = new CheckBackListener(
        new BackendContext("g", db, log, Duration.ofSeconds(30), List.of(),
            new MicrometerMetrics(registry, "g"), Clock.systemUTC()));
    String id = MessageIds.shared().next();
    MessageExt msg = new MessageExt();
    msg.setTopic("t");
    msg.putUserProperty(Envelope.MESSAGE_ID, id);
    msg.setBornTimestamp(System.currentTimeMillis()); // re-put half messages may look young to the broker
    msg.putUserProperty(Envelope.CREATED_AT, Long.toString(System.currentTimeMillis() - Duration.ofDays(8).toMillis()));

    assertThat(listener.checkLocalTransaction(msg)).isEqualTo(LocalTransactionState.UNKNOW);
    assertThat(log.outcome(id)).as("no ROLLBACK fence by guess").isEqualTo(TxnLog.Outcome.UNKNOWN);
    assertThat(registry.get("txn.checkbacks.past-retention").counter().count()).isEqualTo(1.0);
  }
}
