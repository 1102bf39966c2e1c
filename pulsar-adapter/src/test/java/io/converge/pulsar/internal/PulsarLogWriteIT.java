package io.converge.pulsar.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.MessageIds;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The log of a unit's Pulsar transaction ({@link PulsarTxnStore#logWrite}): one row of {@code converge_pulsar_unit}
 * holding its messages, written by one statement with the DB commit (or before it, when the driver cannot pipeline),
 * read back by recovery as it was published. Needs only PostgreSQL.
 */
class PulsarLogWriteIT {

  private static DataSource db;

  @BeforeAll
  static void schema() {
    db = ConvergePostgres.shared().newSchema("plogwrite");
    Migrations.apply(db, "producer");
    Migrations.apply(db, "pulsar");
  }

  @Test
  void theUnitIsOneRowThatRecoveryReadsBackInPublishOrder() throws Exception {
    long most = ThreadLocalRandom.current().nextLong();
    Map<String, String> many = new LinkedHashMap<>();
    many.put("converge-message-id", "x");
    many.put("k", "v");
    many.put("empty", "");
    // ids whose text order is the reverse of the publish order; a message without key, one without properties
    List<PulsarTxnStore.Logged> messages = List.of(
        new PulsarTxnStore.Logged("c-" + MessageIds.shared().next(), "t1", "key", many, "first".getBytes(UTF_8)),
        new PulsarTxnStore.Logged("b-" + MessageIds.shared().next(), "t2", null, Map.of("h", "v"), new byte[0]),
        new PulsarTxnStore.Logged("a-" + MessageIds.shared().next(), "t1", "key", Map.of(), new byte[]{0, -1, 7}));
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      PulsarTxnStore.logWrite(most, 7, "g", Instant.now().plusSeconds(30), Clock.systemUTC(), messages)
          .writeAndCommit(c);
    }
    assertThat(count("SELECT count(*) FROM converge_pulsar_unit WHERE txn_most = ?", most)).isEqualTo(1);
    assertThat(count("SELECT count(*) FROM converge_pulsar_unit WHERE txn_most = ? AND deadline > now()"
        + " + interval '25 seconds' AND deadline < now() + interval '31 seconds'", most)).as("deadline").isEqualTo(1);
    assertThat(count("SELECT count(*) FROM converge_pulsar_txn WHERE txn_most = ?", most)).isZero();
    assertThat(rows("converge_txn_log")).as("no transaction-log rows").isZero();
    try (Connection c = db.getConnection()) {
      List<PulsarTxnStore.Logged> read = LogLayout.UNIT.messages(c, most, 7);
      assertThat(read).extracting(PulsarTxnStore.Logged::id).containsExactly(messages.stream()
          .map(PulsarTxnStore.Logged::id).toArray(String[]::new));
      for (int i = 0; i < messages.size(); i++) {
        PulsarTxnStore.Logged m = messages.get(i);
        assertThat(read.get(i).topic()).isEqualTo(m.topic());
        assertThat(read.get(i).key()).isEqualTo(m.key());
        assertThat(read.get(i).properties()).containsExactlyEntriesOf(m.properties());
        assertThat(read.get(i).payload()).isEqualTo(m.payload());
      }
    }
  }

  @Test
  void aJoinedTransactionWritesTheRowAndItsOwnerCommits() throws Exception {
    long most = ThreadLocalRandom.current().nextLong();
    PulsarTxnStore.Logged m = new PulsarTxnStore.Logged(MessageIds.shared().next(), "t", "key", Map.of("k", "v"),
        "payload".getBytes(UTF_8));
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      PulsarTxnStore.logWrite(most, 8, "g", Instant.now().plusSeconds(30), Clock.systemUTC(), List.of(m)).write(c);
      assertThat(count("SELECT count(*) FROM converge_pulsar_unit WHERE txn_most = ?", most)).as("not committed yet")
          .isZero();
      c.commit();
    }
    try (Connection c = db.getConnection()) {
      assertThat(LogLayout.UNIT.messages(c, most, 8)).singleElement().satisfies(read -> {
        assertThat(read.id()).isEqualTo(m.id());
        assertThat(read.properties()).isEqualTo(m.properties());
      });
    }
  }

  private static long rows(String table) throws Exception {
    try (Connection c = db.getConnection();
        ResultSet rs = c.createStatement().executeQuery(
            "SELECT count(*) FROM " + table)) {
      rs.next();
      return rs.getLong(1);
    }
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
