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
}
