package io.converge.producer.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.core.LateCommitFencedException;
import io.converge.core.MessageIds;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.jdbc.core.JdbcTemplate;

/** The transaction log's answers, its fence against late commits, and its bounded purge. */
@ExtendWith(PostgresExtension.class)
class TxnLogIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static DataSource db;
  private static TxnLog log;

  @BeforeAll
  static void schema(DataSource schema) {
    Migrations.apply(schema, "producer");
    db = schema;
    log = new TxnLog(schema);
  }

  @Test
  void committedRowAnswersCommit() throws Exception {
    String id = MessageIds.shared().next();
    committed(c -> log.recordCommitted(c, id, "g", "t"));
    assertThat(resolve(id, null, Duration.ofHours(1))).isEqualTo(TxnLog.Outcome.COMMITTED);
  }

  /** Issue 13.10: a check-back matches the attempt when both sides name one; rows without one match by id. */
  @Test
  void aCommittedRowOfAnotherAttemptRollsTheStaleAttemptBack() throws Exception {
    String id = MessageIds.shared().next();
    String legacy = MessageIds.shared().next();
    committed(c -> {
      log.recordCommitted(c, id, "attempt-2", "g", "t");
      log.recordCommitted(c, legacy, "g", "t");
    });
    assertThat(resolve(id, "attempt-2", Duration.ofMinutes(1)))
        .isEqualTo(TxnLog.Outcome.COMMITTED);
    assertThat(resolve(id, "attempt-1", Duration.ofMinutes(1)))
        .isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    assertThat(resolve(id, null, Duration.ofMinutes(1))).isEqualTo(TxnLog.Outcome.COMMITTED);
    assertThat(resolve(legacy, "attempt-1", Duration.ofMinutes(1)))
        .isEqualTo(TxnLog.Outcome.COMMITTED);
  }

  /**
   * A fence names the attempt it rolled back: a retry of the same id (another attempt) commits over it;
   * the fenced attempt stays rolled back; a fence without attempt (old rows) fences every attempt.
   */
  @Test
  void aFenceOfOneAttemptLetsAnotherAttemptOfTheSameIdCommit() throws Exception {
    String id = MessageIds.shared().next();
    assertThat(resolve(id, "attempt-1", Duration.ofMinutes(5)))
        .isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    assertThat(resolve(id, "attempt-2", Duration.ofSeconds(1)))
        .as("a young attempt is not answered by another attempt's fence").isEqualTo(TxnLog.Outcome.UNKNOWN);
    assertFenced("the fenced attempt", id, "attempt-1");
    committed(c -> log.recordCommitted(c, id, "attempt-2", "g", "t"));
    assertThat(resolve(id, "attempt-2", Duration.ofMinutes(5)))
        .isEqualTo(TxnLog.Outcome.COMMITTED);
    assertThat(resolve(id, "attempt-1", Duration.ofMinutes(5)))
        .isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    assertFenced("a committed id", id, "attempt-3");
    String legacy = MessageIds.shared().next();
    assertThat(resolve(legacy, null, Duration.ofMinutes(5)))
        .isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    assertFenced("a fence without attempt", legacy, "attempt-2");
  }

  /**
   * Two dead attempts of one id: the second check-back widens the fence to the whole id, so that
   * neither attempt can commit late (the first one's fence is not lost by fencing the second).
   */
  @Test
  void aSecondFencedAttemptKeepsTheFirstOneFenced() throws Exception {
    String id = MessageIds.shared().next();
    for (String checkBack : new String[]{"attempt-1", "attempt-2", "attempt-1"}) {
      assertThat(resolve(id, checkBack, Duration.ofMinutes(5))).as(checkBack).isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    }
    for (String attempt : new String[]{"attempt-1", "attempt-2"}) {
      assertFenced(attempt, id, attempt);
    }
  }

  /**
   * The race of the issue: the check-back of dead attempt 1 and the commit of retry 2 on the same id,
   * in both orders. Attempt 1 is always rolled back, attempt 2 always commits.
   */
  @Test
  void aCheckBackOfTheDeadAttemptRacingTheRetrysCommit() throws Exception {
    // the retry's row first (open), the check-back waits for it
    String id = MessageIds.shared().next();
    try (Connection retry = db.getConnection()) {
      retry.setAutoCommit(false);
      log.recordCommitted(retry, id, "attempt-2", "g", "t");
      CompletableFuture<TxnLog.Outcome> checkBack = CompletableFuture
          .supplyAsync(() -> resolve(id, "attempt-1", Duration.ofMinutes(5)));
      awaitBlockedOnARowLock();
      assertThat(checkBack).as("the fence waits on the retry's uncommitted row").isNotDone();
      retry.commit();
      assertThat(checkBack.get(10, TimeUnit.SECONDS)).isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    }
    assertThat(resolve(id, "attempt-2", Duration.ofMinutes(5)))
        .isEqualTo(TxnLog.Outcome.COMMITTED);
    // the fence first (open), the retry's commit waits for it and then replaces it
    String id2 = MessageIds.shared().next();
    try (Connection fence = db.getConnection(); Statement s = fence.createStatement()) {
      fence.setAutoCommit(false);
      s.execute("INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, attempt)"
          + " VALUES ('" + id2 + "', 'g', 't', 'ROLLED_BACK', 'attempt-1')"); // what resolve() writes
      CompletableFuture<Void> retry = CompletableFuture.runAsync(() -> {
        try {
          committed(c -> log.recordCommitted(c, id2, "attempt-2", "g", "t"));
        } catch (Exception e) {
          throw new java.util.concurrent.CompletionException(e);
        }
      });
      awaitBlockedOnARowLock();
      assertThat(retry).as("the retry's row waits on the uncommitted fence").isNotDone();
      fence.commit();
      retry.get(10, TimeUnit.SECONDS);
    }
    assertThat(resolve(id2, "attempt-1", Duration.ofMinutes(5)))
        .isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    assertThat(resolve(id2, "attempt-2", Duration.ofMinutes(5)))
        .isEqualTo(TxnLog.Outcome.COMMITTED);
  }

  @Test
  void missingRowIsUnknownWhileYoungAndFencedWhenOld() throws Exception {
    String id = MessageIds.shared().next();
    assertThat(resolve(id, null, Duration.ofSeconds(1))).isEqualTo(TxnLog.Outcome.UNKNOWN);
    assertThat(log.outcome(id)).as("no fence while young").isEqualTo(TxnLog.Outcome.UNKNOWN);
    assertThat(resolve(id, null, Duration.ofSeconds(31))).isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    assertFenced("a fenced missing row", id, null);
  }

  @Test
  void aFenceRacingAnOpenLocalTransactionWaitsAndTheCommitWins() throws Exception {
    String id = MessageIds.shared().next();
    try (Connection local = db.getConnection()) {
      local.setAutoCommit(false);
      log.recordCommitted(local, id, "g", "t");
      CompletableFuture<TxnLog.Outcome> checkBack = CompletableFuture
          .supplyAsync(() -> resolve(id, null, Duration.ofMinutes(5)));
      awaitBlockedOnARowLock();
      assertThat(checkBack).as("the fence waits on the uncommitted row").isNotDone();
      local.commit();
      assertThat(checkBack.get(10, TimeUnit.SECONDS)).isEqualTo(TxnLog.Outcome.COMMITTED);
    }
  }

  /**
   * Issue 13.12: the check-back's lock timeout is its own transaction's ({@code SET LOCAL}); the pool's
   * connection goes back to the application with the server default, so a later business transaction
   * on it can wait for locks as long as it normally would.
   */
  @Test
  void aCheckBackLeavesNoSessionSettingOnThePooledConnection() throws Exception {
    try (Connection physical = db.getConnection()) {
      String before = show(physical, "lock_timeout");
      boolean autoCommit = physical.getAutoCommit();
      DataSource poolOfOne = onlyConnection(physical);
      TxnLog oneConnectionLog = new TxnLog(poolOfOne);
      oneConnectionLog.resolve(MessageIds.shared().next(), null, "g", "t", Duration.ofSeconds(1), TIMEOUT);
      oneConnectionLog.resolve(MessageIds.shared().next(), null, "g", "t", Duration.ofMinutes(5), TIMEOUT); // fences
      assertThat(show(physical, "lock_timeout")).as("lock_timeout after two check-backs").isEqualTo(before);
      assertThat(physical.getAutoCommit()).isEqualTo(autoCommit);
    }
  }

  private static String show(Connection c, String setting) throws Exception {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW " + setting)) {
      rs.next();
      return rs.getString(1);
    }
  }

  /** A data source that always hands out {@code c} and never closes it, like a pool of one connection. */
  private static DataSource onlyConnection(Connection c) {
    Connection unclosable = (Connection) java.lang.reflect.Proxy.newProxyInstance(TxnLogIT.class.getClassLoader(),
        new Class<?>[]{Connection.class}, (proxy, method, args) -> {
          if (method.getName().equals("close")) {
            return null;
          }
          try {
            return method.invoke(c, args);
          } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
          }
        });
    return (DataSource) java.lang.reflect.Proxy.newProxyInstance(TxnLogIT.class.getClassLoader(),
        new Class<?>[]{DataSource.class}, (proxy, method, args) -> {
          if (method.getName().equals("getConnection")) {
            return unclosable;
          }
          throw new UnsupportedOperationException(method.getName());
        });
  }

  /** Issue 13.3: a producer group's purge deletes its own rows only. */
  @Test
  void purgeDeletesOnlyTheRowsOfItsGroup() throws Exception {
    JdbcTemplate own = ownLog("txnpurgegroup", """
        INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, created_at)
        SELECT grp || '-' || g, grp, 't', 'COMMITTED', now() - interval '8 days'
        FROM generate_series(1, 30) g, unnest(ARRAY['mine', 'other']) grp
        """);
    assertThat(new TxnLog(own.getDataSource(), Duration.ofDays(7)).purge("mine", 1000)).isEqualTo(30);
    assertThat(
        own.queryForObject("SELECT count(*) FROM converge_txn_log WHERE producer_group = 'other'", Integer.class))
        .as("rows of another group, whose own retention may be longer").isEqualTo(30);
  }

  /**
   * Issue 17 (review): a schema without migration V5 (no converge_txn_end, e.g. migrated up to V4 by hand) is
   * purged of its log rows; the purge failed on the missing table before.
   */
  @Test
  void purgeWithoutTheEndTableStillPurgesTheLog() throws Exception {
    JdbcTemplate own = ownLog("txnpurgenov5", """
        INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, created_at)
        SELECT 'old-' || g, 'g', 't', 'COMMITTED', now() - interval '8 days' FROM generate_series(1, 5) g
        """, "DROP TABLE converge_txn_end");
    assertThat(new TxnLog(own.getDataSource(), Duration.ofDays(7)).purge("g", 1000)).isEqualTo(5);
    assertThat(own.queryForObject("SELECT count(*) FROM converge_txn_log", Integer.class)).isZero();
  }

  /** Issue 17 (review): END records are one row per attempt (V6); the purge deletes old ones of its group only. */
  @Test
  void purgeDeletesTheOldEndRecordsOfEveryAttempt() throws Exception {
    JdbcTemplate own = ownLog("txnpurgeend", """
        INSERT INTO converge_txn_end (message_id, producer_group, topic, attempt, reason, since, created_at)
        SELECT CASE grp WHEN 'g' THEN 'm' ELSE 'n' END, grp, 't', a, 'r', now(), now() - interval '8 days'
        FROM unnest(ARRAY['a1', 'a2']) a, unnest(ARRAY['g', 'other']) grp
        """, """
        INSERT INTO converge_txn_end (message_id, producer_group, topic, attempt, reason, since)
        VALUES ('m', 'g', 't', 'a3', 'r', now())
        """);
    assertThat(new TxnLog(own.getDataSource(), Duration.ofDays(7)).purge("g", 1)).isEqualTo(2);
    assertThat(own.queryForList("SELECT producer_group || ' ' || attempt FROM converge_txn_end ORDER BY 1",
        String.class)).containsExactly("g a3", "other a1", "other a2");
  }

  /** Issue 13.3: past the retention a missing row may have been purged: never fence it by guess. */
  @Test
  void aCheckBackPastTheRetentionIsNeverAnsweredRollback() throws Exception {
    String id = MessageIds.shared().next();
    assertThat(resolve(id, null, Duration.ofDays(8))).isEqualTo(TxnLog.Outcome.PAST_RETENTION);
    assertThat(resolve(id, null, Duration.ofDays(8).plusMinutes(1)))
        .isEqualTo(TxnLog.Outcome.PAST_RETENTION);
    assertThat(log.outcome(id)).as("no fence").isEqualTo(TxnLog.Outcome.UNKNOWN);
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT producer_group, kind, status, checks FROM converge_txn_ticket WHERE message_id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("ticket raised").isTrue();
        assertThat(rs.getString(1)).isEqualTo("g");
        assertThat(rs.getString(2)).isEqualTo("CHECK_BACK_PAST_RETENTION");
        assertThat(rs.getString(3)).isEqualTo("OPEN");
        assertThat(rs.getInt(4)).isEqualTo(2);
      }
    }
    // a committed row past the retention (not purged yet) still answers from the row
    String committed = MessageIds.shared().next();
    committed(c -> log.recordCommitted(c, committed, "g", "t"));
    assertThat(resolve(committed, null, Duration.ofDays(8))).isEqualTo(TxnLog.Outcome.COMMITTED);
  }

  @Test
  void purgeRemovesOnlyRowsOlderThanRetentionInBatches() throws Exception {
    JdbcTemplate own = ownLog("txnpurge", """
        INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, created_at)
        SELECT 'old-' || g, 'g', 't', 'COMMITTED', now() - interval '8 days' FROM generate_series(1, 2500) g
        """, """
        INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, created_at)
        SELECT 'new-' || g, 'g', 't', 'COMMITTED', now() - interval '6 days' FROM generate_series(1, 40) g
        """);
    assertThat(new TxnLog(own.getDataSource(), Duration.ofDays(7)).purge("g", 1000)).isEqualTo(2500);
    assertThat(own.queryForMap(
        "SELECT count(*) AS all_rows, count(*) FILTER (WHERE message_id LIKE 'new-%') AS new_rows FROM converge_txn_log"))
        .containsExactly(entry("all_rows", 40L), entry("new_rows", 40L));
  }

  /** {@code log.resolve} of producer group g and topic t, with the test's lock timeout. */
  private static TxnLog.Outcome resolve(String id, String attempt, Duration age) {
    return log.resolve(id, attempt, "g", "t", age, TIMEOUT);
  }

  /** Work on a connection of the test's schema. */
  @FunctionalInterface
  private interface Work {

    void run(Connection c) throws Exception;
  }

  /** Runs {@code work} in a transaction of its own and commits it. */
  private static void committed(Work work) throws Exception {
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      work.run(c);
      c.commit();
    }
  }

  /** Asserts that recording {@code id} committed (of {@code attempt}, unless null) is refused as a late commit. */
  private static void assertFenced(String as, String id, String attempt) throws Exception {
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> {
        if (attempt == null) {
          log.recordCommitted(c, id, "g", "t");
        } else {
          log.recordCommitted(c, id, attempt, "g", "t");
        }
      }).as(as).isInstanceOf(LateCommitFencedException.class);
      c.rollback();
    }
  }

  /** A new schema with the producer's migrations and the rows {@code inserts} write; a template on it. */
  private static JdbcTemplate ownLog(String prefix, String... inserts) {
    JdbcTemplate own = new JdbcTemplate(ConvergePostgres.shared().newSchema(prefix));
    Migrations.apply(own.getDataSource(), "producer");
    for (String insert : inserts) {
      own.execute(insert);
    }
    return own;
  }

  /** Waits until a session of this database waits on a lock taken on {@code converge_txn_log} (a marker, not a guess). */
  private void awaitBlockedOnARowLock() {
    await("a statement on converge_txn_log waits on a lock").atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> {
          try (Connection c = db.getConnection();
              Statement s = c.createStatement();
              ResultSet rs = s.executeQuery(
                  "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
                      + " AND query LIKE '%converge_txn_log%'")) {
            rs.next();
            return rs.getLong(1) > 0;
          }
        });
  }
}
