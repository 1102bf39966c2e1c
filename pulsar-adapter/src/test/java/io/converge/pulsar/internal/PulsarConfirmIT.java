package io.converge.pulsar.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The confirmation of committed Pulsar transactions ({@link PulsarTxnStore#confirmAll}) deletes their rows by
 * primary key whatever the table held when the session first confirmed: a plan the server cached for a prepared
 * statement while the table was small (PostgreSQL chooses a generic plan after a few executions; this test
 * forces it) scans the whole table for every batch, a cost that grows with the rows left unconfirmed (a backlog
 * after an outage, parked transactions). Needs only PostgreSQL.
 */
class PulsarConfirmIT {

  @Test
  void aBatchIsDeletedByPrimaryKeyAfterTheTableGrew() throws Exception {
    DataSource schema = ConvergePostgres.shared().newSchema("pconfirm");
    Migrations.apply(schema, "producer");
    Migrations.apply(schema, "pulsar");
    HikariConfig config = new HikariConfig();
    config.setDataSource(schema);
    config.setMaximumPoolSize(1); // one session: the one whose statements and plans are cached
    config.setConnectionInitSql("SET plan_cache_mode = force_generic_plan");
    try (HikariDataSource db = new HikariDataSource(config)) {
      execute(db, "ALTER TABLE converge_pulsar_unit SET (autovacuum_enabled = false)"); // no re-plan by an analyze
      PulsarTxnStore store = new PulsarTxnStore(db);
      for (int i = 0; i < 8; i++) { // past the driver's threshold for a statement prepared on the server
        store.confirmAll(new long[]{i}, new long[]{i});
      }
      execute(db, """
          INSERT INTO converge_pulsar_unit (txn_most, txn_least, producer_group, deadline, message_ids, topics,
                                            msg_keys, properties, payloads)
          SELECT n, n, 'g', now(), ARRAY['m-' || n], '{t}', '{k}', '{NULL}', ARRAY['\\x00'::bytea]
            FROM generate_series(1, 20000) n""");
      long scansBefore = sequentialScans(db);

      store.confirmAll(new long[]{5, 6, 7}, new long[]{5, 6, 7});

      assertThat(sequentialScans(db)).isEqualTo(scansBefore);
      store.confirmAll(new long[]{Long.MIN_VALUE, Long.MAX_VALUE}, new long[]{-1, 0}); // any id is a valid literal
      try (Connection c = db.getConnection();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT count(*) FROM converge_pulsar_unit")) {
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(20000 - 3);
      }
    }
  }

  @Test
  void anEmptyBatchIsNothingAndUnpairedIdsAreRefused() throws Exception {
    DataSource schema = ConvergePostgres.shared().newSchema("pconfirm0");
    Migrations.apply(schema, "producer");
    Migrations.apply(schema, "pulsar");
    PulsarTxnStore store = new PulsarTxnStore(schema);
    store.confirmAll(new long[0], new long[0]);
    assertThatThrownBy(() -> store.confirmAll(new long[]{1, 2}, new long[]{1}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 and 1");
  }

  private static void execute(DataSource db, String sql) throws Exception {
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /** The table's sequential scans so far, this session's included (flushed first). */
  private static long sequentialScans(DataSource db) throws Exception {
    execute(db, "SELECT pg_stat_force_next_flush()");
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT seq_scan FROM pg_stat_user_tables WHERE relid = 'converge_pulsar_unit'::regclass")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
