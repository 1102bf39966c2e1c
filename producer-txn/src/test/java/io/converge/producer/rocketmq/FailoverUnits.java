package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.MessageIds;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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

  /**
   * Two units held open across a broker kill, each publishing {@code n} new ids (with {@code keys}, or none
   * when null): one commits and one rolls back once {@link #killed()} is called.
   */
  static OpenAcrossKill openAcrossKill(TxnProducer producer, String topic, int n, List<String> keys) {
    return new OpenAcrossKill(producer, topic, ids(n), ids(n), keys);
  }

  /** See {@link #openAcrossKill}. */
  static final class OpenAcrossKill {

    final List<String> committing;
    final List<String> rollingBack;
    private final CountDownLatch prepared = new CountDownLatch(2);
    private final CountDownLatch killed = new CountDownLatch(1);
    private final ExecutorService threads = Executors.newFixedThreadPool(2);
    private final Future<String> commit;
    private final Future<String> rollback;

    private OpenAcrossKill(TxnProducer producer, String topic, List<String> committing, List<String> rollingBack,
        List<String> keys) {
      this.committing = committing;
      this.rollingBack = rollingBack;
      commit = threads.submit(() -> openUnit(producer, topic, committing, keys, prepared, killed, true));
      rollback = threads.submit(() -> openUnit(producer, topic, rollingBack, keys, prepared, killed, false));
    }

    /** Adds both units' ids to {@code all} (every id of the test) and the rolling-back ones to {@code rolledBack}. */
    void expect(Collection<String> all, Collection<String> rolledBack) {
      all.addAll(committing);
      all.addAll(rollingBack);
      rolledBack.addAll(rollingBack);
    }

    /**
     * Asserts that both units stored their half messages within 30 s; a unit that failed meanwhile (a send
     * refused or timed out) fails this with its exception.
     */
    void awaitPrepared() throws Exception {
      if (!prepared.await(30, TimeUnit.SECONDS)) {
        for (Future<String> unit : List.of(commit, rollback)) {
          if (unit.isDone()) {
            unit.get(); // an ExecutionException with the unit's failure
          }
        }
        assertThat(prepared.getCount()).as("units held open across the kill whose half messages are not stored"
            + " after 30 s").isZero();
      }
    }

    /** Lets both units end (the broker was killed). */
    void killed() {
      killed.countDown();
    }

    /** How the committing unit ended ({@code "committed"} or {@code "rolled back"}), within 30 s. */
    String commitOutcome() throws Exception {
      return commit.get(30, TimeUnit.SECONDS);
    }

    /** How the rolling-back unit ended, within 30 s; then stops the units' threads. */
    String rollbackOutcome() throws Exception {
      try {
        return rollback.get(30, TimeUnit.SECONDS);
      } finally {
        threads.shutdown();
      }
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
