package io.converge.producer.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.DatabaseRefusedException;
import io.converge.core.LateCommitFencedException;
import io.converge.core.MessageIds;
import io.converge.core.Migrations;
import io.converge.producer.internal.TxnLog.Outcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * converge_txn_log partitioned by the day of the message id (producer-txn README, "Partitions by day"): a check-back
 * gets the same answer whichever partition holds the id, an id is logged once across partitions, expired day
 * partitions of a group are dropped whole, and the migration of a populated table keeps every row readable. Each test
 * has a schema of its own (partitions are per schema); the purge reads the database's clock, so days are relative to
 * today.
 */
class TxnLogPartitionsIT {

  private static final Duration RETENTION = Duration.ofDays(7);
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final Duration OLD = Duration.ofMinutes(5); // past TIMEOUT: a check-back without a row fences

  private static DataSource schema() {
    DataSource ds = ConvergePostgres.shared().newSchema("txnparts");
    Migrations.apply(ds, "producer");
    return ds;
  }

  private static String idAt(Instant at) {
    return new MessageIds(Clock.fixed(at, ZoneOffset.UTC)).next();
  }

  private static String partitionOf(DataSource ds, String id) {
    return new JdbcTemplate(ds).queryForObject(
        "SELECT string_agg(tableoid::regclass::text, ',') FROM converge_txn_log WHERE message_id = ?", String.class,
        id);
  }

  private static LocalDate today(DataSource ds) {
    return LocalDate.parse(new JdbcTemplate(ds).queryForObject("SELECT ((now() AT TIME ZONE 'UTC')::date)::text",
        String.class));
  }

  private static void record(DataSource ds, String id, String attempt) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      new TxnLog(ds).recordCommitted(c, id, attempt, "g", "t");
      c.commit();
    }
  }

  private static void recordPipelined(DataSource ds, String id, String attempt) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        new TxnLog(ds).committedWrite(id, attempt, "g", "t").writeAndCommit(c);
      } finally {
        c.rollback();
      }
    }
  }

  /** Guarantee 1: fenced before its day's partition existed (the catch-all), the id conflicts there after. */
  @Test
  void anIdLoggedBeforeItsDaysPartitionExistedConflictsInTheCatchAllAfter() throws Exception {
    DataSource ds = schema();
    TxnLog log = new TxnLog(ds, RETENTION);
    String fenced = MessageIds.shared().next();
    String committed = MessageIds.shared().next();
    String retried = MessageIds.shared().next();
    assertThat(log.resolve(fenced, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.ROLLED_BACK);
    assertThat(log.resolve(retried, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.ROLLED_BACK);
    record(ds, committed, "a1");
    assertThat(partitionOf(ds, fenced)).isEqualTo("converge_txn_log_catchall");

    log.purge("g", 100); // creates today's partition: the ids' day
    assertThat(TxnLog.partitions(ds).list()).contains(MessageIds.dayOf(fenced));

    assertThatThrownBy(() -> record(ds, fenced, "a1")).isInstanceOf(LateCommitFencedException.class);
    assertThatThrownBy(() -> recordPipelined(ds, fenced, "a1")).isInstanceOf(LateCommitFencedException.class);
    assertThatThrownBy(() -> recordPipelined(ds, committed, "a2")).isInstanceOf(LateCommitFencedException.class);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> log.recordCommitted(c, List.of(committed, MessageIds.shared().next()), "g",
          List.of("t", "t"))).isInstanceOf(LateCommitFencedException.class);
      c.rollback();
    }
    assertThat(log.resolve(fenced, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.ROLLED_BACK);
    assertThat(log.resolve(committed, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.COMMITTED);
    // a retry of the id with another attempt replaces the dead attempt's fence, where it is
    recordPipelined(ds, retried, "a2");
    assertThat(log.resolve(retried, "a2", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.COMMITTED);
    assertThat(log.resolve(retried, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.ROLLED_BACK);
    for (String id : List.of(fenced, committed, retried)) {
      assertThat(partitionOf(ds, id)).as("one row, in the catch-all").isEqualTo("converge_txn_log_catchall");
    }

    // a new id of the day goes to its partition and answers alike
    String fresh = MessageIds.shared().next();
    record(ds, fresh, "a1");
    assertThat(partitionOf(ds, fresh)).isEqualTo(TxnLog.partitions(ds).name(MessageIds.dayOf(fresh)));
    assertThat(log.resolve(fresh, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.COMMITTED);
    assertThat(log.resolve(fresh, "a0", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.ROLLED_BACK);
    assertThatThrownBy(() -> record(ds, fresh, "a1")).isInstanceOf(LateCommitFencedException.class);
    String fencedFresh = MessageIds.shared().next();
    assertThat(log.resolve(fencedFresh, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.ROLLED_BACK);
    assertThatThrownBy(() -> recordPipelined(ds, fencedFresh, "a1")).isInstanceOf(LateCommitFencedException.class);
    assertThat(partitionOf(ds, fencedFresh)).isEqualTo(TxnLog.partitions(ds).name(MessageIds.dayOf(fencedFresh)));
  }

  /**
   * Guarantee 1 in REPEATABLE READ: a unit whose snapshot is older than its day's partition cannot see a row of its id
   * logged in the catch-all meanwhile; its write is refused instead of logging the id a second time.
   */
  @Test
  void aRepeatableReadUnitOlderThanItsDaysPartitionIsRefusedNotLoggedTwice() throws Exception {
    DataSource ds = schema();
    TxnLog log = new TxnLog(ds, RETENTION);
    String id = MessageIds.shared().next();
    try (Connection unit = ds.getConnection()) {
      unit.setAutoCommit(false);
      unit.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      try (var s = unit.createStatement()) {
        s.execute("SELECT 1"); // the unit's snapshot
      }
      assertThat(log.resolve(id, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.ROLLED_BACK);
      log.purge("g", 100);
      assertThatThrownBy(() -> log.recordCommitted(unit, id, "a1", "g", "t"))
          .isInstanceOf(DatabaseRefusedException.class).hasMessageContaining("REPEATABLE READ");
      unit.rollback();
    }
    assertThat(partitionOf(ds, id)).isEqualTo("converge_txn_log_catchall");
  }

  /** Guarantee 2. */
  @Test
  void thePurgeDropsAGroupsDayPartitionWholeOnlyWhenItsNewestRowIsPastTheRetention() throws Exception {
    DataSource ds = schema();
    JdbcTemplate sql = new JdbcTemplate(ds);
    LocalDate today = today(ds);
    LocalDate expired = today.minusDays(10);
    LocalDate touched = today.minusDays(9);
    LocalDate shared = today.minusDays(8);
    TxnLog.partitions(ds).createAhead(expired, 3);
    Instant tenDaysAgo = Instant.now().minus(Duration.ofDays(10));
    String expiredId = idAt(tenDaysAgo);
    String touchedId = idAt(tenDaysAgo.plus(Duration.ofDays(1)));
    String sharedId = idAt(tenDaysAgo.plus(Duration.ofDays(2)));
    String othersId = idAt(tenDaysAgo.plus(Duration.ofDays(2)).plusMillis(1));
    for (String id : List.of(expiredId, touchedId, sharedId, othersId)) {
      record(ds, id, "a1");
    }
    sql.update("UPDATE converge_txn_log SET created_at = now() - interval '10 days'");
    sql.update("UPDATE converge_txn_log SET producer_group = 'other' WHERE message_id = ?", othersId);
    sql.update("UPDATE converge_txn_log SET created_at = now() - interval '1 hour' WHERE message_id = ?", touchedId);
    sql.update("INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, created_at)"
        + " VALUES ('old-1', 'g', 't', 'COMMITTED', now() - interval '8 days'),"
        + " ('new-1', 'g', 't', 'COMMITTED', now() - interval '6 days')");

    assertThat(new TxnLog(ds, RETENTION).purge("g", 100)).as("the catch-all's and the shared partition's, one by one")
        .isEqualTo(2);

    assertThat(TxnLog.partitions(ds).list()).as("dropped whole; today's and the next days' created ahead")
        .containsExactly(touched, shared, today, today.plusDays(1), today.plusDays(2), today.plusDays(3));
    assertThat(sql.queryForList("SELECT message_id FROM converge_txn_log ORDER BY 1", String.class))
        .containsExactlyInAnyOrder(touchedId, othersId, "new-1");
  }

  /** Guarantee 3: the rows of the unpartitioned table answer check-backs after the migration. */
  @Test
  void theMigrationKeepsEveryRowOfThePopulatedTableReadable() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("txnparts");
    Flyway.configure(Migrations.class.getClassLoader()).dataSource(ds).locations("classpath:db/converge/producer")
        .table("converge_schema_history_producer").baselineOnMigrate(true).baselineVersion("0").target("6").load()
        .migrate();
    String committed = MessageIds.shared().next();
    String fenced = MessageIds.shared().next();
    JdbcTemplate sql = new JdbcTemplate(ds);
    sql.update("INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, attempt)"
        + " VALUES (?, 'g', 't', 'COMMITTED', 'a1'), (?, 'g', 't', 'ROLLED_BACK', 'a1'),"
        + " ('order-42', 'g', 't', 'COMMITTED', NULL)", committed, fenced);
    sql.update("INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome)"
        + " SELECT 'old-' || g, 'g', 't', 'COMMITTED' FROM generate_series(1, 1000) g");

    assertThat(Migrations.apply(ds, "producer")).isEqualTo(3);
    TxnLog log = new TxnLog(ds, RETENTION);
    log.purge("g", 100); // today's partition now exists: the ids route there and find their rows in the catch-all

    assertThat(log.resolve(committed, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.COMMITTED);
    assertThat(log.resolve(committed, "a0", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.ROLLED_BACK);
    assertThat(log.resolve(fenced, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.ROLLED_BACK);
    assertThat(log.resolve("order-42", null, "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.COMMITTED);
    assertThat(log.outcome("old-7")).isEqualTo(Outcome.COMMITTED);
    assertThatThrownBy(() -> record(ds, committed, "a1")).isInstanceOf(LateCommitFencedException.class);
    assertThatThrownBy(() -> record(ds, fenced, "a1")).isInstanceOf(LateCommitFencedException.class);
    assertThat(sql.queryForObject("SELECT count(*) FROM converge_txn_log_catchall", Integer.class)).isEqualTo(1003);
    assertThat(sql.queryForObject("SELECT count(*) FROM converge_txn_log", Integer.class)).isEqualTo(1003);
  }

  /**
   * Guarantee 4: partitions live in their parent's schema, whatever the search path of the purge or the writers, and
   * a writer looks its id's partition up there: a same-named table that another schema puts first in its search path
   * is not taken for one.
   */
  @Test
  void everySearchPathRoutesAnIdAlike() throws Exception {
    DataSource ds = schema();
    String home = new JdbcTemplate(ds).queryForObject("SELECT current_schema()", String.class);
    JdbcTemplate otherSchema = new JdbcTemplate(ConvergePostgres.shared().newSchema("txnpartso"));
    String other = otherSchema.queryForObject("SELECT current_schema()", String.class);
    DataSource otherFirst = ConvergePostgres.shared().dataSource(other + "," + home);
    new TxnLog(otherFirst, RETENTION).purge("g", 100);
    String id = MessageIds.shared().next();
    record(otherFirst, id, "a1");
    assertThatThrownBy(() -> record(ds, id, "a1")).as("the same id on the schema's own search path")
        .isInstanceOf(LateCommitFencedException.class);
    assertThat(new TxnLog(ds, RETENTION).resolve(id, "a1", "g", "t", OLD, TIMEOUT)).isEqualTo(Outcome.COMMITTED);
    assertThat(partitionOf(ds, id)).isEqualTo(TxnLog.partitions(ds).name(MessageIds.dayOf(id)));

    String future = idAt(Instant.now().plus(Duration.ofDays(10))); // no partition yet
    otherSchema.execute("CREATE TABLE " + TxnLog.partitions(ds).name(MessageIds.dayOf(future)) + " (x int)");
    record(otherFirst, future, "a1");
    assertThatThrownBy(() -> record(ds, future, "a1")).isInstanceOf(LateCommitFencedException.class);
    assertThat(partitionOf(ds, future)).isEqualTo("converge_txn_log_catchall");
    assertThat(new JdbcTemplate(ds).queryForObject("SELECT count(*) FROM pg_class WHERE relkind = 'r'"
        + " AND relname ~ '^converge_txn_log_p[0-9]{8}$' AND relnamespace = '" + home + "'::regnamespace",
        Integer.class)).isEqualTo(4);
  }
}
