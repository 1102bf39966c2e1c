package io.converge.pulsar.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.LateCommitFencedException;
import io.converge.core.MessageIds;
import io.converge.core.Migrations;
import io.converge.producer.internal.TxnLog;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The log of a unit's Pulsar transaction sent with the DB commit in one round trip
 * ({@link PulsarTxnStore#logWrite}): the transaction's row, its messages and their transaction-log rows
 * commit together; a message a check-back already resolved commits none of them. Needs only PostgreSQL.
 */
class PulsarLogWriteIT {

  private static DataSource db;
  private static TxnLog log;

  @BeforeAll
  static void schema() {
    db = ConvergePostgres.shared().newSchema("plogwrite");
    Migrations.apply(db, "producer");
    Migrations.apply(db, "pulsar");
    log = new TxnLog(db);
  }

  @Test
  void theTransactionItsMessagesAndTheirLogRowsCommitTogether() throws Exception {
    long most = ThreadLocalRandom.current().nextLong();
    List<PulsarTxnStore.Logged> messages = List.of(message(), message());
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      PulsarTxnStore.logWrite(most, 7, "g", Instant.now().plusSeconds(30), Clock.systemUTC(), messages, log)
          .writeAndCommit(c);
    }
    assertThat(count("SELECT count(*) FROM converge_pulsar_txn WHERE txn_most = ?", most)).isEqualTo(1);
    assertThat(count("SELECT count(*) FROM converge_pulsar_txn_message WHERE txn_most = ?", most)).isEqualTo(2);
    for (PulsarTxnStore.Logged m : messages) {
      assertThat(log.outcome(m.id())).isEqualTo(TxnLog.Outcome.COMMITTED);
    }
    try (Connection c = db.getConnection()) {
      assertThat(PulsarTxnStore.messages(c, most, 7)).extracting(PulsarTxnStore.Logged::properties)
          .containsOnly(Map.of("converge-message-id", "x", "k", "v"));
    }
  }

  @Test
  void aResolvedMessageCommitsNothing() throws Exception {
    long most = ThreadLocalRandom.current().nextLong();
    PulsarTxnStore.Logged resolved = message();
    assertThat(log.resolve(resolved.id(), null, "g", "t", Duration.ofMinutes(1), Duration.ofSeconds(1)))
        .isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> PulsarTxnStore.logWrite(most, 7, "g", Instant.now().plusSeconds(30),
          Clock.systemUTC(), List.of(message(), resolved), log).writeAndCommit(c))
          .isInstanceOf(LateCommitFencedException.class);
      c.rollback();
    }
    assertThat(count("SELECT count(*) FROM converge_pulsar_txn WHERE txn_most = ?", most)).isZero();
    assertThat(count("SELECT count(*) FROM converge_pulsar_txn_message WHERE txn_most = ?", most)).isZero();
  }

  private static PulsarTxnStore.Logged message() {
    return new PulsarTxnStore.Logged(MessageIds.shared().next(), "t", "key",
        Map.of("converge-message-id", "x", "k", "v"), "payload".getBytes(UTF_8));
  }

  private static long count(String sql, long most) throws Exception {
    try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, most);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
