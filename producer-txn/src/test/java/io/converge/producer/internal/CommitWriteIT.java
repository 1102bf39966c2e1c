package io.converge.producer.internal;

import io.converge.core.internal.PipelinedCommit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.LateCommitFencedException;
import io.converge.core.MessageIds;
import io.converge.core.Migrations;
import io.converge.producer.testing.Rows;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A unit's last log row sent with its COMMIT in one round trip ({@link TxnLog#committedWrite}): it
 * commits the unit's writes with the row, and a fenced message commits nothing at all.
 */
class CommitWriteIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static DataSource db;
  private static TxnLog log;

  @BeforeAll
  static void schema() throws Exception {
    db = ConvergePostgres.shared().newSchema("commitwrite");
    Migrations.apply(db, "producer");
    log = new TxnLog(db);
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE work (id text PRIMARY KEY)");
    }
  }

  @Test
  void theWriteTravelsWithTheCommitAndCommitsTheUnit() throws Exception {
    String id = MessageIds.shared().next();
    try (Connection c = db.getConnection()) {
      assertThat(PipelinedCommit.supported(c)).as("the PostgreSQL driver pipelines").isTrue();
      c.setAutoCommit(false);
      insertWork(c, id);
      log.committedWrite(id, "attempt-1", "g", "t").writeAndCommit(c);
      // the connection goes on in a new transaction: rolling that back leaves the committed unit alone
      insertWork(c, id + "-next");
      c.rollback();
    }
    assertThat(workExists(id)).isTrue();
    assertThat(workExists(id + "-next")).isFalse();
    assertThat(log.resolve(id, "attempt-1", "g", "t", Duration.ofMinutes(1), TIMEOUT))
        .isEqualTo(TxnLog.Outcome.COMMITTED);
  }

  @Test
  void aFencedMessageCommitsNothing() throws Exception {
    String id = MessageIds.shared().next();
    // a check-back found no row past the timeout and fenced this attempt
    assertThat(log.resolve(id, "attempt-1", "g", "t", Duration.ofMinutes(1), Duration.ofSeconds(1)))
        .isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      insertWork(c, id);
      assertThatThrownBy(() -> log.committedWrite(id, "attempt-1", "g", "t").writeAndCommit(c))
          .isInstanceOf(LateCommitFencedException.class)
          .satisfies(e -> assertThat(((LateCommitFencedException) e).messageId()).isEqualTo(id));
      c.rollback();
    }
    assertThat(workExists(id)).as("the unit's own write").isFalse();
    assertThat(log.outcome(id)).isEqualTo(TxnLog.Outcome.ROLLED_BACK);
  }

  @Test
  void aJoinedTransactionWritesAloneAndItsOwnerCommits() throws Exception {
    String id = MessageIds.shared().next();
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      insertWork(c, id);
      log.committedWrite(id, "attempt-1", "g", "t").write(c);
      c.rollback(); // the owner decided otherwise: nothing stays
    }
    assertThat(workExists(id)).isFalse();
    assertThat(log.outcome(id)).isEqualTo(TxnLog.Outcome.UNKNOWN);
  }

  private static void insertWork(Connection c, String id) throws Exception {
    Rows.insert(c, "work", id);
  }

  private static boolean workExists(String id) throws Exception {
    return Rows.exists(db, "work", id);
  }
}
