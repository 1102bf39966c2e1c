package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The row lifecycle on PostgreSQL: lease the due row, retry it later, park it past its attempts, complete once. */
class RowLifecycleIT {

  private static final RowLifecycle ROWS = RowLifecycleTest.notified().build();

  private DataSource db;

  @BeforeEach
  void table() throws Exception {
    db = ConvergePostgres.shared().newSchema("rowlife");
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      s.execute("""
          CREATE TABLE converge_stuck_notified (kind text, item_id text, payload text NOT NULL,
            attempts int NOT NULL DEFAULT 0, last_error text, next_attempt_at timestamptz,
            delivered_at timestamptz, PRIMARY KEY (kind, item_id))""");
      s.execute("INSERT INTO converge_stuck_notified (kind, item_id, payload, next_attempt_at) VALUES"
          + " ('ticket', '1', 'p1', now() - interval '2 minutes'), ('ticket', '2', 'p2', now() - interval '1 minute'),"
          + " ('ticket', '3', 'p3', now() + interval '1 hour')");
      s.execute("""
          CREATE TABLE queue (seq bigint PRIMARY KEY, topic text NOT NULL, body text NOT NULL,
            attempts int NOT NULL DEFAULT 0, last_error text, next_attempt_at timestamptz, parked_at timestamptz,
            done_at timestamptz)""");
      // 1-3 due on topic a (1, 2 never tried: no due time), 4 due later, 5 parked, 6 done, 7 on topic b
      s.execute(
          """
              INSERT INTO queue (seq, topic, body, next_attempt_at, parked_at, done_at) VALUES
                (1, 'a', 'b1', NULL, NULL, NULL), (2, 'a', 'b2', NULL, NULL, NULL),
                (3, 'a', 'b3', now() - interval '1 minute', NULL, NULL), (4, 'a', 'b4', now() + interval '1 hour', NULL, NULL),
                (5, 'a', 'b5', NULL, now(), NULL), (6, 'a', 'b6', NULL, NULL, now()), (7, 'b', 'b7', NULL, NULL, NULL)""");
    }
  }

  @Test
  void leasesTheOldestDueRowRetriesParksAndCompletesOnce() throws Exception {
    try (Connection c = db.getConnection()) {
      RowLifecycle.Leased first = ROWS.lease(c, Duration.ofMinutes(5), 2);
      assertThat(first).isEqualTo(new RowLifecycle.Leased(List.of("ticket", "1"), List.of("p1"), 0));
      assertThat(ROWS.lease(c, Duration.ofMinutes(5), 2).key()).as("row 1 is leased, not due: row 2 is next")
          .containsExactly(
              "ticket", "2");
      assertThat(ROWS.lease(c, Duration.ofMinutes(5), 2)).as("nothing else is due").isNull();

      assertThat(ROWS.retryLater(c, first.key(), "500 from the hook", Duration.ZERO)).isTrue();
      assertThat(ROWS.lease(c, Duration.ofMinutes(5), 2)).isEqualTo(
          new RowLifecycle.Leased(List.of("ticket", "1"), List.of("p1"), 1));
      assertThat(ROWS.retryLater(c, first.key(), "500 again", Duration.ZERO)).isTrue();
      assertThat(ROWS.lease(c, Duration.ofMinutes(5), 2)).as("parked: its attempts are spent").isNull();
      assertThat(text(c, "SELECT last_error FROM converge_stuck_notified WHERE item_id = '1'")).isEqualTo("500 again");

      assertThat(ROWS.complete(c, List.of("ticket", "2"))).isTrue();
      assertThat(ROWS.complete(c, List.of("ticket", "2"))).as("completed once").isFalse();
      assertThat(ROWS.retryLater(c, List.of("ticket", "2"), "late", Duration.ZERO)).as("closed rows stay").isFalse();
    }
  }

  @Test
  void twoConnectionsLeasingAtOnceGetDisjointRows() throws Exception {
    try (Connection a = db.getConnection(); Connection b = db.getConnection()) {
      a.setAutoCommit(false);
      b.setAutoCommit(false);
      // a long lease is not what keeps them apart: a zero lease leaves both rows due, only the row lock does
      RowLifecycle.Leased byA = ROWS.lease(a, Duration.ZERO, 5);
      RowLifecycle.Leased byB = ROWS.lease(b, Duration.ZERO, 5);
      assertThat(byA.key()).containsExactly("ticket", "1");
      assertThat(byB.key()).as("SKIP LOCKED passes the row a holds").containsExactly("ticket", "2");
      assertThat(ROWS.lease(b, Duration.ZERO, 5)).as("b may take its own row again, never a's").satisfies(
          again -> assertThat(again.key()).containsExactly("ticket", "2"));
      a.commit();
      b.commit();
    }
  }

  private static String text(Connection c, String sql) throws Exception {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static final RowLifecycle QUEUE = RowLifecycle.builder("queue").key("seq").returning("body")
      .attempts("attempts").dueAt("next_attempt_at").reason("last_error").parkedAt("parked_at")
      .openUntil("done_at IS NULL", "done_at = now()").claimAlias("q").claimOrder("seq").claimWhere("q.topic = ?")
      .build();

  @Test
  void claimsTheDueOpenUnparkedRowsOfItsConditionsInOrder() throws Exception {
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      assertThat(QUEUE.claimDue(c, 10, "a")).as("no due time is due; later, parked and done rows are not")
          .containsExactly(new RowLifecycle.Leased(List.of(1L), List.of("b1"), 0),
              new RowLifecycle.Leased(List.of(2L), List.of("b2"), 0),
              new RowLifecycle.Leased(List.of(3L), List.of("b3"), 0));
      assertThat(QUEUE.claimDue(c, 2, "a")).extracting(RowLifecycle.Leased::key)
          .containsExactly(List.of(1L), List.of(2L));
      assertThat(QUEUE.claimNext(c, "b")).isEqualTo(new RowLifecycle.Leased(List.of(7L), List.of("b7"), 0));
      assertThat(QUEUE.claimNext(c, "c")).isNull();
      c.commit();
    }
  }

  @Test
  void claimsSkipTheRowsAnotherTransactionHolds() throws Exception {
    try (Connection a = db.getConnection(); Connection b = db.getConnection()) {
      a.setAutoCommit(false);
      b.setAutoCommit(false);
      assertThat(QUEUE.claimDue(a, 2, "a")).extracting(RowLifecycle.Leased::key)
          .containsExactly(List.of(1L), List.of(2L));
      assertThat(QUEUE.claimDue(b, 10, "a")).as("SKIP LOCKED passes a's rows").extracting(RowLifecycle.Leased::key)
          .containsExactly(List.of(3L));
      a.rollback();
      assertThat(QUEUE.claimNext(b, "a").key()).as("released by a's rollback").containsExactly(1L);
      b.commit();
    }
  }

  @Test
  void retriesParksPostponesAndCompletesClaimedRows() throws Exception {
    try (Connection c = db.getConnection()) {
      assertThat(QUEUE.retryOrPark(c, List.of(1L), "refused", Duration.ZERO, 2)).isTrue();
      assertThat(row(c, 1)).as("attempt 1 of 2: due again, not parked").isEqualTo("1 refused false");
      assertThat(QUEUE.claimNext(c, "a").attempts()).isEqualTo(1);
      assertThat(QUEUE.retryOrPark(c, List.of(1L), "refused again", Duration.ZERO, 2)).isTrue();
      assertThat(row(c, 1)).as("attempt 2 of 2 parks").isEqualTo("2 refused again true");
      assertThat(QUEUE.claimNext(c, "a").key()).as("a parked row is not claimed").containsExactly(2L);

      assertThat(QUEUE.postpone(c, List.of(2L), "broker down", Duration.ofHours(1))).isTrue();
      assertThat(row(c, 2)).as("no attempt counted").isEqualTo("0 broker down false");
      assertThat(QUEUE.retryLater(c, List.of(3L), "no answer", Duration.ofHours(1))).isTrue();
      assertThat(row(c, 3)).isEqualTo("1 no answer false");
      assertThat(QUEUE.claimNext(c, "a")).as("2 and 3 due in an hour, 4 too").isNull();

      assertThat(QUEUE.park(c, List.of(7L), "gone")).isTrue();
      assertThat(row(c, 7)).isEqualTo("1 gone true");
      assertThat(QUEUE.park(c, List.of(99L), "no such row")).isFalse();

      assertThat(QUEUE.completeAll(c, "bigint", List.of(2L, 3L, 6L))).as("6 was done before").isEqualTo(2);
      assertThat(QUEUE.completeAll(c, "bigint", List.of(2L, 3L))).as("completed once").isZero();
      assertThat(QUEUE.completeAll(c, "bigint", List.of())).isZero();
      assertThat(QUEUE.complete(c, List.of(4L))).isTrue();
      assertThat(QUEUE.complete(c, List.of(4L))).isFalse();
    }
  }

  private static String row(Connection c, long seq) throws Exception {
    return text(c, "SELECT attempts || ' ' || last_error || ' ' || (parked_at IS NOT NULL) FROM queue WHERE seq = "
        + seq);
  }
}
