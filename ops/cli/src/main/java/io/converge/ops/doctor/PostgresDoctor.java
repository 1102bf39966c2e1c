package io.converge.ops.doctor;

import io.converge.consumer.DedupPurger;
import io.converge.consumer.http.IdempotencyKeyPurger;
import io.converge.core.ConvergeException;
import io.converge.core.Migrations;
import io.converge.core.internal.DayPartitions;
import io.converge.outbox.Outbox;
import io.converge.producer.internal.TxnLog;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.LocalDate;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The database checks of {@code converge doctor}: durability settings, {@code wal_level}, replication slots and the
 * WAL each retains, Converge's migrations per module at the version this build ships, the day partitions of today and
 * tomorrow of the dedup, Idempotency-Key and outbox tables and of the transaction log, and stuck items
 * ({@link StuckItems}). Reads only.
 * Not thread-safe (one run).
 */
final class PostgresDoctor {

  private static final String SLOTS = """
      SELECT slot_name, slot_type, coalesce(plugin, ''), active, coalesce(wal_status, ''),
             coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0)::bigint
      FROM pg_replication_slots ORDER BY slot_name""";

  private static final String MODULES = """
      SELECT substring(table_name FROM 'converge_schema_history_(.*)') FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_name LIKE 'converge\\_schema\\_history\\_%'""";

  private final DataSource dataSource;
  private final long maxSlotWalBytes;
  private final Set<String> requiredModules;
  private final Clock clock;

  PostgresDoctor(DataSource dataSource, long maxSlotWalBytes, Set<String> requiredModules) {
    this.clock = Clock.systemUTC();
    this.dataSource = dataSource;
    this.maxSlotWalBytes = maxSlotWalBytes;
    this.requiredModules = requiredModules;
  }

  /** Runs the checks, reporting each finding to {@code out}. */
  void run(Consumer<Finding> out) {
    Set<String> modules;
    try (Connection c = dataSource.getConnection()) {
      out.accept(Finding.pass("postgres.connect", c.getMetaData().getDatabaseProductVersion() + ", schema "
          + value(c, "SELECT current_schema()")));
      durability(c, out);
      modules = modules(c);
      walLevel(c, modules.contains("cdc"), out);
      slots(c, out);
    } catch (SQLException e) {
      out.accept(Finding.fail("postgres.connect", "cannot read the database: " + e.getMessage(),
          "check --jdbc-url, --user and --password (the user needs to read pg_settings and pg_replication_slots)"));
      return;
    }
    migrations(modules, out);
    if (modules.contains("consumer")) {
      partitions("converge_dedup", DedupPurger.partitions(dataSource), "claims still deduplicate (in the catch-all)",
          "run the dedup purge (DedupPurger.purgeExpired: the services' purge schedule), which creates the partitions"
              + " of today and the next " + DedupPurger.PARTITIONS_AHEAD + " days",
          out);
    }
    if (modules.contains("idempotency")) {
      partitions("converge_idempotency_key", IdempotencyKeyPurger.partitions(dataSource),
          "Idempotency-Keys are still claimed once (in the catch-all)",
          "run the Idempotency-Key purge (IdempotencyKeyPurger.purgeExpired: the services' purge schedule), which "
              + "creates the partitions of today and the next " + IdempotencyKeyPurger.PARTITIONS_AHEAD + " days",
          out);
    }
    if (modules.contains("outbox")) {
      partitions("converge_outbox", Outbox.partitions(dataSource), "messages are still written and relayed (in the"
          + " catch-all)",
          "run the outbox purge (the polling relay's purge interval, or converge purge), which"
              + " creates the partitions of today and the next " + Outbox.PARTITIONS_AHEAD + " days",
          out);
    }
    if (modules.contains("producer")) {
      partitions("converge_txn_log", TxnLog.partitions(dataSource), "units still log their outcome (in the"
          + " catch-all)",
          "run the transaction log's purge (the producers' purge schedule,"
              + " converge.producer.purge-interval, or TxnProducer's purgeLog), which creates the partitions of today and"
              + " the next " + TxnLog.PARTITIONS_AHEAD + " days",
          out);
    }
    StuckItems.check(dataSource, out);
  }

  /**
   * Today's and tomorrow's partitions of {@code table} (consumer-idem README, "Partitions by day" and
   * "Idempotency-Key partitions by day"; outbox-relay and producer-txn READMEs, "Partitions by day"): without them its
   * rows still go somewhere ({@code stillWorks}), the catch-all, but its retention is the row-by-row batch DELETE
   * again.
   */
  private void partitions(String table, DayPartitions partitions, String stillWorks, String fix,
      Consumer<Finding> out) {
    String check = "postgres.partitions." + table;
    LocalDate today = LocalDate.now(clock);
    List<LocalDate> missing;
    try {
      missing = partitions.missing(today, 2);
    } catch (ConvergeException e) {
      out.accept(Finding.fail(check, e.getMessage() + (e.getCause() == null ? "" : ": " + e.getCause().getMessage()),
          "check the user's rights to read pg_inherits and pg_class"));
      return;
    }
    if (missing.isEmpty()) {
      out.accept(Finding.pass(check, "the partitions of " + today + " and " + today.plusDays(1) + " exist"));
    } else {
      out.accept(Finding.warn(check, "no partition for " + missing + ": " + stillWorks + ", but those days' rows go"
          + " to the catch-all, purged row by row", fix));
    }
  }

  private static void durability(Connection c, Consumer<Finding> out) throws SQLException {
    for (String setting : List.of("fsync", "synchronous_commit", "full_page_writes")) {
      String value = value(c, "SHOW " + setting);
      if (value.equals("off")) {
        out.accept(Finding.fail("postgres." + setting, setting + " = off: a crash can lose a commit the service was "
            + "told about, while its message is already delivered (durability risk)",
            "set " + setting
                + " = on (postgresql.conf, ALTER SYSTEM, or the role/database settings that override it)"));
      } else {
        out.accept(Finding.pass("postgres." + setting, setting + " = " + value));
      }
    }
  }

  private static void walLevel(Connection c, boolean cdc, Consumer<Finding> out) throws SQLException {
    String level = value(c, "SHOW wal_level");
    if (cdc && !level.equals("logical")) {
      out.accept(Finding.fail("postgres.wal_level", "wal_level = " + level + " but the CDC relay's tables are here: "
          + "its replication slot needs logical decoding", "set wal_level = logical and restart PostgreSQL"));
    } else if (level.equals("minimal")) {
      out.accept(Finding.warn("postgres.wal_level", "wal_level = minimal: no standby and no point-in-time recovery",
          "set wal_level = replica (logical for the CDC relay) and restart PostgreSQL"));
    } else {
      out.accept(Finding.pass("postgres.wal_level", "wal_level = " + level));
    }
  }

  private void slots(Connection c, Consumer<Finding> out) throws SQLException {
    int n = 0;
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(SLOTS)) {
      while (rs.next()) {
        n++;
        String name = rs.getString(1);
        String what = rs.getString(2) + " slot " + name
            + (rs.getString(3).isEmpty() ? "" : " (" + rs.getString(3) + ")");
        boolean active = rs.getBoolean(4);
        String walStatus = rs.getString(5);
        long retained = rs.getLong(6);
        String check = "postgres.slot." + name;
        String held = what + " retains " + mb(retained) + " of WAL" + (active ? "" : ", no reader connected");
        String drop = "if its reader is gone for good: SELECT pg_drop_replication_slot('" + name + "'); else restart "
            + "its reader (the CDC relay); and bound it with max_slot_wal_keep_size";
        if (walStatus.equals("lost")) {
          out.accept(Finding.fail(check, what + " lost the WAL it needed (wal_status = lost): its reader cannot resume",
              "drop and re-create the slot; the CDC relay re-reads the outbox from its offset table"));
        } else if (retained > maxSlotWalBytes) {
          out.accept(Finding.fail(check, held + ", over --max-slot-wal-mb " + mb(maxSlotWalBytes)
              + ": an unread slot keeps WAL until the disk fills", drop));
        } else if (!active) {
          out.accept(Finding.warn(check, held + ": an unread slot keeps WAL forever", drop));
        } else {
          out.accept(Finding.pass(check, held));
        }
      }
    }
    if (n == 0) {
      out.accept(Finding.pass("postgres.slots", "no replication slots"));
    }
  }

  private Set<String> modules(Connection c) throws SQLException {
    Set<String> found = new TreeSet<>();
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(MODULES)) {
      while (rs.next()) {
        found.add(rs.getString(1));
      }
    }
    return found;
  }

  private void migrations(Set<String> found, Consumer<Finding> out) {
    Set<String> modules = new TreeSet<>(found);
    modules.addAll(requiredModules);
    if (modules.isEmpty()) {
      out.accept(Finding.fail("postgres.migrations", "no Converge schema history in this schema (no "
          + "converge_schema_history_* table): Converge's tables are missing or in another schema",
          "start the services once (they apply Migrations.apply(dataSource, module) at start), or pass --schema"));
      return;
    }
    for (String module : modules) {
      String check = "postgres.migrations." + module;
      Migrations.Status s;
      try {
        s = Migrations.status(dataSource, module);
      } catch (ConvergeException e) {
        out.accept(Finding.fail(check, e.getMessage() + (e.getCause() == null ? "" : ": " + e.getCause().getMessage()),
            "check --module (the modules: those with migrations in this build) and the user's rights on the schema"));
        continue;
      }
      if (s.applied() == null) {
        out.accept(Finding.fail(check, "module " + module + " has no migration applied (expected version " + s.latest()
            + ")", "start a service of this module once, or run Migrations.apply(dataSource, \"" + module + "\")"));
      } else if (s.pending() > 0) {
        out.accept(Finding.fail(check, "module " + module + " at version " + s.applied() + ", " + s.pending()
            + " migration(s) pending up to version " + s.latest(),
            "deploy the services of this Converge version "
                + "(they migrate at start), or run Migrations.apply(dataSource, \"" + module + "\")"));
      } else if (s.ahead()) {
        out.accept(Finding.warn(check, "module " + module + " at version " + s.applied() + ", newer than this "
            + "doctor knows (" + s.latest() + ")", "run the converge doctor of the Converge version the services use"));
      } else {
        out.accept(Finding.pass(check, "module " + module + " at version " + s.applied()));
      }
    }
  }

  private static String value(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getString(1);
    }
  }

  static String mb(long bytes) {
    return bytes < 1024 * 1024 ? bytes / 1024 + " kB" : bytes / (1024 * 1024) + " MB";
  }

}
