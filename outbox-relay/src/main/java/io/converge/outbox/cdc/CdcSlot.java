package io.converge.outbox.cdc;

import io.converge.outbox.internal.Sleeper;
import io.converge.core.ConvergeException;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replication slot and publication (inserts into {@code converge_outbox} and
 * {@code converge_cdc_heartbeat}) of one CDC relay (same name): created before the engine starts,
 * so that the stream's start position exists when {@link CdcRelay#start()} returns; dropped when the
 * relay is retired. Also creates the relay's tables ({@link #prepare}) and reads the slot's lag.
 * Stateless apart from its data source; thread-safe.
 *
 * @param db the outbox's database
 * @param name the slot's and the publication's name
 * @param schema the schema of {@code converge_outbox}
 * @param sleeper paces a drop's retries
 */
record CdcSlot(DataSource db, String name, String schema, Sleeper sleeper) {

  private static final Logger LOG = LoggerFactory.getLogger(CdcSlot.class);

  private static final String CREATE_SLOT = """
      SELECT pg_create_logical_replication_slot(?, 'pgoutput')
      WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = ?)
      """;
  /** Bytes of WAL between the server's current position and what the slot confirmed: {@code cdc.lag}. */
  private static final String LAG = """
      SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint FROM pg_replication_slots WHERE slot_name = ?
      """;
  /** PostgreSQL's duplicate_object: another relay of this name created the slot at the same time. */
  private static final String DUPLICATE_OBJECT = "42710";

  /** Applies the {@code cdc} migrations, then {@link #create}s publication and slot. */
  boolean prepare() {
    Migrations.apply(db, "cdc");
    return create();
  }

  /** Creates the insert-only publication and the pgoutput slot if missing; returns whether the slot is new. */
  boolean create() {
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      c.setAutoCommit(true);
      boolean publication;
      try (ResultSet rs = s.executeQuery("SELECT 1 FROM pg_publication WHERE pubname = '" + name + "'")) {
        publication = rs.next();
      }
      if (!publication) {
        // inserts only: marking rows published must not come back as events; the day partitions' rows (those of
        // partitions created later too) come under converge_outbox's name
        s.execute("CREATE PUBLICATION " + name + " FOR TABLE " + schema + ".converge_outbox, " + schema
            + ".converge_cdc_heartbeat WITH (publish = 'insert', publish_via_partition_root = true)");
      } else {
        upgrade(s);
      }
      try (PreparedStatement ps = c.prepareStatement(CREATE_SLOT)) {
        ps.setString(1, name);
        ps.setString(2, name);
        try (ResultSet rs = ps.executeQuery()) {
          boolean created = rs.next();
          if (created) {
            LOG.info("CDC slot {} created; rows committed before it are sent by the sweeper", name);
          }
          return created;
        }
      }
    } catch (SQLException e) {
      if (DUPLICATE_OBJECT.equals(e.getSQLState())) {
        return false;
      }
      throw new ConvergeException("CDC relay cannot create publication and slot " + name + ": " + e.getMessage(), e);
    }
  }

  /**
   * Brings a publication of an older version up to date: adds the heartbeat table; names the partitioned
   * converge_outbox (a publication created before outbox schema version 5 names the old table, now the catch-all
   * partition, when the migration could not alter it) and publishes its partitions' rows under its name.
   */
  private void upgrade(Statement s) throws SQLException {
    try (ResultSet rs = s.executeQuery("SELECT 1 FROM pg_publication_tables WHERE pubname = '" + name
        + "' AND tablename = 'converge_cdc_heartbeat'")) {
      if (!rs.next()) {
        s.execute("ALTER PUBLICATION " + name + " ADD TABLE " + schema + ".converge_cdc_heartbeat");
      }
    }
    boolean viaRoot;
    boolean outbox;
    try (ResultSet rs = s.executeQuery("SELECT p.pubviaroot, EXISTS (SELECT 1 FROM pg_publication_rel r"
        + " WHERE r.prpubid = p.oid AND r.prrelid = to_regclass('" + schema + ".converge_outbox'))"
        + " FROM pg_publication p WHERE p.pubname = '" + name + "'")) {
      rs.next();
      viaRoot = rs.getBoolean(1);
      outbox = rs.getBoolean(2);
    }
    if (!outbox) {
      s.execute("ALTER PUBLICATION " + name + " ADD TABLE " + schema + ".converge_outbox");
    }
    if (!viaRoot) {
      s.execute("ALTER PUBLICATION " + name + " SET (publish_via_partition_root = true)");
    }
  }

  /** The slot's lag in bytes of WAL, or -1 when the slot does not exist. */
  long lag() throws SQLException {
    try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(LAG)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Math.max(0, rs.getLong(1)) : -1;
      }
    }
  }

  /** Drops slot, publication and the stored offsets of relay {@code relayName}. */
  void drop(String relayName) throws SQLException, InterruptedException {
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      for (int attempt = 0;; attempt++) {
        try {
          s.execute(
              "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + name + "'");
          break;
        } catch (SQLException e) {
          if (attempt >= 20) {
            throw e;
          }
          sleeper.sleep(Duration.ofMillis(250)); // the walsender of the closed engine may still be exiting
        }
      }
      s.execute("DROP PUBLICATION IF EXISTS " + name);
      for (String table : new String[]{"converge_cdc_offset", "converge_cdc_heartbeat"}) {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE relay_name = ?")) {
          ps.setString(1, relayName);
          ps.executeUpdate();
        }
      }
    }
  }
}
