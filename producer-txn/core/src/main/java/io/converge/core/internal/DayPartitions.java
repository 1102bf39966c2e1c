package io.converge.core.internal;

import io.converge.core.internal.BatchPurger.Cutoff;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The day partitions of a table partitioned by range of a {@code date} column: {@code <parent>_pYYYYMMDD} for
 * {@code [day, day + 1)}, created ahead, listed, checked and dropped whole once expired: retention without a DELETE
 * of every row (no WAL per row, no dead tuples). Shared by Converge's append-heavy tables (the dedup, Idempotency-Key
 * and outbox tables, and the transaction log, whose rows are owned by producer groups of different retentions:
 * {@link #ownedBy}).
 *
 * <p>Every change takes its locks under a short {@code lock_timeout} ({@link #DEFAULT_LOCK_TIMEOUT}), so that it never
 * queues ahead of the table's writers for longer: a change that cannot have its lock gives up, is logged, and is tried
 * again by the next run.
 * <ul>
 *   <li>Creating a partition first locks the parent in {@code SHARE ROW EXCLUSIVE} mode: it waits for the writers in
 *   flight and commits before the next ones start. A writer that decided where a row goes while the partition did not
 *   exist has committed before it exists (the dedup claim relies on this).
 *   <li>Dropping a partition locks the parent and the partition ({@code ACCESS EXCLUSIVE}, as {@code DROP} needs), then
 *   checks again under the lock that its newest row is before the cutoff, and that it holds no row that
 *   {@linkplain #keptWhile keeps it}: a row written or changed meanwhile keeps it. The newest row is
 *   {@code max(<time>)}: each partition needs an index on that column (or expression), so that the check under the
 *   lock is one index probe, not a scan.
 * </ul>
 *
 * <p>Immutable and thread-safe; several instances may run it at once (creations are {@code IF NOT EXISTS}, a drop of a
 * partition already dropped is skipped).
 */
public final class DayPartitions {

  /** The default longest wait for a lock. */
  public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofMillis(200);

  private static final Logger LOG = LoggerFactory.getLogger(DayPartitions.class);
  private static final DateTimeFormatter SUFFIX = DateTimeFormatter.BASIC_ISO_DATE;
  private static final String LOCK_NOT_AVAILABLE = "55P03";
  private static final String UNDEFINED_TABLE = "42P01";
  private static final String INSUFFICIENT_PRIVILEGE = "42501";

  private static final String LIST = """
      SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = to_regclass(?) AND c.relname ~ ?
      """;

  private final DataSource dataSource;
  private final String parent;
  private final String partitionDdl;
  private final String timeColumn;
  private final String keptWhile;
  private final String ownerColumn;
  private final Duration lockTimeout;

  private DayPartitions(DataSource dataSource, String parent, String partitionDdl, String timeColumn, String keptWhile,
      String ownerColumn, Duration lockTimeout) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.parent = parent;
    this.partitionDdl = partitionDdl;
    this.timeColumn = timeColumn;
    this.keptWhile = keptWhile;
    this.ownerColumn = ownerColumn;
    this.lockTimeout = Require.positive("lockTimeout", lockTimeout);
  }

  /**
   * The day partitions of {@code parent}; names are trusted SQL identifiers (constants of the callers).
   *
   * @param partitionDdl run on each new partition, {@code %s} standing for its name, e.g.
   *     {@code ALTER TABLE %s ADD PRIMARY KEY (tenant, id)}; null for none
   * @param timeColumn the column (or an expression over the partition's columns, e.g.
   *     {@code greatest(expires_at, leased_until)}) whose newest value says until when a partition's rows are needed
   */
  public static DayPartitions of(DataSource dataSource, String parent, String partitionDdl, String timeColumn) {
    return new DayPartitions(dataSource, parent, partitionDdl, timeColumn, null, null, DEFAULT_LOCK_TIMEOUT);
  }

  /** These partitions with another longest wait for a lock. */
  public DayPartitions lockTimeout(Duration timeout) {
    return new DayPartitions(dataSource, parent, partitionDdl, timeColumn, keptWhile, ownerColumn, timeout);
  }

  /**
   * These partitions, none of which is dropped while it holds a row matching {@code condition}, however old its
   * newest time (e.g. {@code published_at IS NULL}: a message not sent yet, which the time column's {@code max}
   * would not see). A trusted SQL condition over the partition's columns (a constant of the caller).
   */
  public DayPartitions keptWhile(String condition) {
    return new DayPartitions(dataSource, parent, partitionDdl, timeColumn, Objects.requireNonNull(condition,
        "condition"), ownerColumn, lockTimeout);
  }

  /**
   * These partitions with rows owned by the value of {@code column} (e.g. the transaction log's producer group, each
   * with its own retention): {@link #dropExpired(LocalDate, Instant, String)} drops a partition only when every row
   * is its owner's. An index that leads with {@code column}, then the time column, keeps that check to a few index
   * lookups.
   */
  public DayPartitions ownedBy(String column) {
    return new DayPartitions(dataSource, parent, partitionDdl, timeColumn, keptWhile,
        Objects.requireNonNull(column, "column"), lockTimeout);
  }

  /** The name of {@code day}'s partition (unqualified: it lives in its parent's schema). */
  public String name(LocalDate day) {
    return parent + "_p" + SUFFIX.format(day);
  }

  /**
   * An SQL expression for a write's routing: the partition of {@code parent} (an unqualified table name, resolved
   * through the search path as the write's own statement resolves it) for {@code day} (an SQL expression of type
   * {@code date}) as a {@code regclass}, or null while that partition does not exist. It is looked up in the parent's
   * own schema, never through the search path (where another schema's same-named table could stand first), so that
   * instances with different search paths route alike; and through the catalog's latest committed state, not the
   * statement's snapshot. It costs a catalog lookup and a name parse (a few microseconds): a statement evaluates it
   * once per row it routes, never once per use of its result (a CTE or subquery that PostgreSQL would inline into
   * each use is kept apart with {@code MATERIALIZED} or {@code OFFSET 0}).
   */
  public static String partitionLookup(String parent, String day) {
    return """
        to_regclass((SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = '%1$s'::regclass)
                    || '.%1$s_p' || to_char(%2$s, 'YYYYMMDD'))""".formatted(parent, day);
  }

  /**
   * The parent's schema as a quoted-if-needed identifier: partitions are created, read and dropped by their name in
   * it, never through the search path (where a same-named table of another schema could stand first).
   */
  private static final String PARENT_SCHEMA = "SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = ?::regclass";

  private String qualified(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PARENT_SCHEMA)) {
      ps.setString(1, parent);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1) + "." + name;
      }
    }
  }

  /**
   * The days that have a partition, in order.
   *
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public List<LocalDate> list() {
    TreeSet<LocalDate> days = new TreeSet<>();
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(LIST)) {
      ps.setString(1, parent);
      ps.setString(2, "^" + parent + "_p[0-9]{8}$");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String name = rs.getString(1);
          days.add(LocalDate.parse(name.substring(name.length() - 8), SUFFIX));
        }
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot list the partitions of " + parent, null, e);
    }
    return new ArrayList<>(days);
  }

  /** The days of {@code [from, from + days)} that have no partition (what a health check reports). */
  public List<LocalDate> missing(LocalDate from, int days) {
    List<LocalDate> have = list();
    List<LocalDate> missing = new ArrayList<>();
    for (int i = 0; i < days; i++) {
      if (!have.contains(from.plusDays(i))) {
        missing.add(from.plusDays(i));
      }
    }
    return missing;
  }

  /**
   * Creates the missing partitions of {@code [from, from + days)}, each in a transaction of its own.
   *
   * @return the days created now (a day whose lock was not had in time is left to the next run)
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public List<LocalDate> createAhead(LocalDate from, int days) {
    List<LocalDate> created = new ArrayList<>();
    for (LocalDate day : missing(from, days)) {
      String name = name(day);
      boolean done = inTransaction("create " + name, s -> {
        s.execute("LOCK TABLE " + parent + " IN SHARE ROW EXCLUSIVE MODE");
        String table = qualified(s.getConnection(), name);
        if (exists(s, table)) { // another instance created it meanwhile
          return false;
        }
        s.execute("CREATE TABLE " + table + " PARTITION OF " + parent + " FOR VALUES FROM ('" + day
            + "') TO ('" + day.plusDays(1) + "')");
        if (partitionDdl != null) {
          s.execute(partitionDdl.formatted(table));
        }
        return true;
      });
      if (done) {
        LOG.info("Created partition {} of {}", name, parent);
        created.add(day);
      }
    }
    return created;
  }

  /**
   * The database's current day in UTC ({@code now()}): "today" for a table whose times are the database's.
   *
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public LocalDate databaseDay() {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT (now() AT TIME ZONE 'UTC')::date")) {
      rs.next();
      return rs.getObject(1, LocalDate.class);
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot read the database's day for " + parent, null, e);
    }
  }

  /**
   * Drops the partitions of the days before {@code beforeDay} whose newest row was written before {@code cutoff} (an
   * empty one too) and that hold no row they are {@linkplain #keptWhile kept while}, each in a transaction of its own.
   *
   * @return the days dropped now
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public List<LocalDate> dropExpired(LocalDate beforeDay, Instant cutoff) {
    return dropExpired(beforeDay, Cutoff.before(cutoff));
  }

  /**
   * {@link #dropExpired(LocalDate, Instant)} with a cutoff that may be the database's clock
   * ({@link Cutoff#olderThan}): for a table whose times are written with {@code now()}, each check, the one under the
   * drop's lock too, compares with the {@code now()} of its own transaction.
   *
   * @return the days dropped now
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public List<LocalDate> dropExpired(LocalDate beforeDay, Cutoff cutoff) {
    if (ownerColumn != null) {
      throw new IllegalStateException("the partitions of " + parent + " are owned by " + ownerColumn
          + ": drop them with dropExpired(beforeDay, cutoff, owner)");
    }
    return drop(beforeDay, Objects.requireNonNull(cutoff, "cutoff"), null);
  }

  /**
   * {@link #dropExpired(LocalDate, Instant)} for the partitions owned by {@link #ownedBy} column: drops only those whose
   * rows are all {@code owner}'s (an empty one too). A partition that holds another owner's rows is kept: that owner's
   * retention may be longer; the caller deletes its own expired rows from it.
   *
   * @return the days dropped now
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public List<LocalDate> dropExpired(LocalDate beforeDay, Instant cutoff, String owner) {
    if (ownerColumn == null) {
      throw new IllegalStateException("the partitions of " + parent + " have no owner column (see ownedBy)");
    }
    return drop(beforeDay, Cutoff.before(cutoff), Objects.requireNonNull(owner, "owner"));
  }

  private List<LocalDate> drop(LocalDate beforeDay, Cutoff cutoff, String owner) {
    List<LocalDate> dropped = new ArrayList<>();
    for (LocalDate day : list()) {
      if (!day.isBefore(beforeDay) || !expiredNow(day, cutoff, owner)) {
        continue;
      }
      String name = name(day);
      boolean done = inTransaction("drop " + name, s -> {
        String table = qualified(s.getConnection(), name);
        if (!exists(s, table)) { // another instance dropped it meanwhile
          return false;
        }
        s.execute("LOCK TABLE " + parent + ", " + table + " IN ACCESS EXCLUSIVE MODE");
        if (!expired(s.getConnection(), table, cutoff, owner)) {
          LOG.debug("Partition {} was written to meanwhile: kept", name);
          return false;
        }
        s.execute("DROP TABLE " + table);
        return true;
      });
      if (done) {
        LOG.info("Dropped partition {} of {} (its newest row {})", name, parent, cutoff);
        dropped.add(day);
      }
    }
    return dropped;
  }

  private boolean expiredNow(LocalDate day, Cutoff cutoff, String owner) {
    try (Connection c = dataSource.getConnection()) {
      return expired(c, qualified(c, name(day)), cutoff, owner);
    } catch (SQLException e) {
      if (UNDEFINED_TABLE.equals(e.getSQLState())) { // another instance dropped it meanwhile
        return false;
      }
      throw DatabaseErrors.translate("Cannot read the newest row of " + name(day), null, e);
    }
  }

  /**
   * Whether the newest row of {@code name} is before {@code cutoff}, no row {@linkplain #keptWhile keeps it} and, with
   * an owner, every row is its (another owner's row is one below or above it in the index on (owner, time): two index
   * lookups).
   */
  private boolean expired(Connection c, String name, Cutoff cutoff, String owner) throws SQLException {
    String kept = keptWhile == null ? "" : " AND NOT EXISTS (SELECT 1 FROM " + name + " WHERE " + keptWhile + ")";
    String sql = owner == null
        ? "SELECT coalesce((SELECT max(" + timeColumn + ") FROM " + name + ") < " + cutoff.sql() + ", true)" + kept
        : "SELECT coalesce((SELECT max(" + timeColumn + ") FROM " + name + " WHERE " + ownerColumn + " = ?) < "
            + cutoff.sql() + ", true)" + " AND NOT EXISTS (SELECT 1 FROM " + name + " WHERE " + ownerColumn + " < ?)"
            + " AND NOT EXISTS (SELECT 1 FROM " + name + " WHERE " + ownerColumn + " > ?)" + kept;
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      if (owner == null) {
        cutoff.bind(ps, 1);
      } else {
        ps.setString(1, owner);
        cutoff.bind(ps, 2);
        ps.setString(3, owner);
        ps.setString(4, owner);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  private static boolean exists(Statement s, String name) throws SQLException {
    try (ResultSet rs = s.executeQuery("SELECT to_regclass('" + name + "') IS NOT NULL")) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  @FunctionalInterface
  private interface Change {

    boolean run(Statement s) throws SQLException;
  }

  /** Runs {@code change} in a transaction under the lock timeout: false when it said so or its lock was not had. */
  private boolean inTransaction(String what, Change change) {
    try (Connection c = dataSource.getConnection()) {
      int isolation = c.getTransactionIsolation();
      // READ COMMITTED whatever the pool's default: the check under the lock must see what committed while the lock
      // was waited for (in REPEATABLE READ the snapshot of the statements before the lock would hide a row written
      // meanwhile, and the drop would take it along)
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute("SET LOCAL lock_timeout = " + lockTimeout.toMillis());
        boolean done = change.run(s);
        if (done) {
          c.commit();
        } else {
          c.rollback();
        }
        return done;
      } catch (SQLException e) {
        c.rollback();
        if (LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
          LOG.warn("Cannot {} of {}: lock not had within {} ms, left to the next run", what, parent,
              lockTimeout.toMillis());
          return false;
        }
        if (UNDEFINED_TABLE.equals(e.getSQLState())) { // another instance dropped it while this one waited
          LOG.debug("Cannot {} of {}: dropped meanwhile", what, parent);
          return false;
        }
        if (INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
          // creating and dropping partitions needs the parent's owner; the rest of the purge (the batch DELETE of
          // the catch-all) needs only DML rights and still runs
          LOG.warn("Cannot {} of {}: this role does not own the table ({}); run the purge as its owner", what, parent,
              e.getMessage());
          return false;
        }
        throw e;
      } finally {
        c.setAutoCommit(true);
        c.setTransactionIsolation(isolation);
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot " + what + " of " + parent, null, e);
    }
  }
}
