package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.converge.producer.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * What the failover tests of the half-message backend share: units held open across a broker kill, and
 * the truth of the database (a message's unit committed iff its transaction-log row is COMMITTED, written in
 * the unit's transaction; a ROLLED_BACK row is a check-back's fence).
 */
final class FailoverUnits {

  private FailoverUnits() {
  }

  /** {@code n} new message ids. */
  static List<String> ids(int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(MessageIds.shared().next());
    }
    return ids;
  }

  /**
   * A unit that publishes {@code ids} (with {@code keys}, one per id, or none when null), counts down
   * {@code prepared} once their half messages are stored, waits for {@code killed}, then commits or rolls
   * back.
   *
   * @return {@code "committed"} or {@code "rolled back"}
   */
  static String openUnit(TxnProducer producer, String topic, List<String> ids, List<String> keys,
      CountDownLatch prepared, CountDownLatch killed, boolean commits) {
    try {
      producer.inTransaction(tx -> {
        OrdersTable.insert(tx.connection(), ids.get(0));
        for (int i = 0; i < ids.size(); i++) {
          tx.publish(OutgoingMessage.builder(topic).id(ids.get(i)).key(keys == null ? null : keys.get(i))
              .payload("in flight".getBytes(UTF_8)).build());
        }
        prepared.countDown();
        killed.await(30, TimeUnit.SECONDS);
        if (!commits) {
          throw new IllegalStateException("the unit rolls back");
        }
        return null;
      });
      return "committed";
    } catch (IllegalStateException e) {
      return "rolled back";
    }
  }

  /** The ids among {@code ids} whose transaction-log row has {@code outcome} (COMMITTED, ROLLED_BACK). */
  static Set<String> withOutcome(DataSource db, Collection<String> ids, String outcome) throws Exception {
    Set<String> found = new HashSet<>();
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT message_id FROM converge_txn_log WHERE outcome = ? AND message_id = ANY (?)")) {
      ps.setString(1, outcome);
      ps.setArray(2, c.createArrayOf("text", ids.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          found.add(rs.getString(1));
        }
      }
    }
    return found;
  }
}
