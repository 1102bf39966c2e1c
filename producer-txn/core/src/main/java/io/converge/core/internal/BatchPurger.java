package io.converge.core.internal;

import io.converge.core.DatabaseUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.LongConsumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one bounded-batch purge of Converge's tables (transaction log, outbox, dedup, Idempotency-Keys):
 * deletes the rows whose time column is before a {@link Cutoff}, in batches of at most
 * {@code batchSize} rows, each batch one short autocommitted statement on a connection borrowed for it
 * ({@code DELETE … WHERE key IN (SELECT key … LIMIT n)}): no long lock and no DELETE storm on a hot
 * table. An optional filter (e.g. {@code producer_group = ?}) restricts the rows.
 *
 * <p>Immutable and thread-safe; several instances may purge the same table at once (they delete
 * disjoint or already-deleted rows).
 */
public final class BatchPurger {

  /** The largest batch accepted by the callers' settings. */
  public static final int MAX_BATCH_SIZE = 100_000;

  private static final Logger LOG = LoggerFactory.getLogger(BatchPurger.class);

  private final DataSource dataSource;
  private final String table;
  private final String timeColumn;
  private final String key;
  private final String filter;
  private final boolean oldestFirst;

  private BatchPurger(DataSource dataSource, String table, String timeColumn, String key, String filter,
      boolean oldestFirst) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.table = table;
    this.timeColumn = timeColumn;
    this.key = key;
    this.filter = filter;
    this.oldestFirst = oldestFirst;
  }

  /**
   * A purger of {@code table} by {@code timeColumn} (rows with a null time are never purged), keyed by
   * {@code ctid}, in no particular order, without a filter. Table and column names are trusted SQL
   * identifiers (constants of the callers), never user input.
   */
  public static BatchPurger of(DataSource dataSource, String table, String timeColumn) {
    return new BatchPurger(dataSource, table, timeColumn, "ctid", null, false);
  }

  /** This purger selecting batches by {@code column} (a unique column such as the primary key) instead of {@code ctid}. */
  public BatchPurger keyedBy(String column) {
    return new BatchPurger(dataSource, table, timeColumn, column, filter, oldestFirst);
  }

  /** This purger deleting the oldest rows first (each batch ordered by the time column). */
  public BatchPurger oldestFirst() {
    return new BatchPurger(dataSource, table, timeColumn, key, filter, true);
  }

  /**
   * This purger restricted to the rows matching {@code condition}, an SQL condition whose {@code ?}
   * parameters are given to each {@link #purge} and {@link #count} call, e.g. {@code producer_group = ?}.
   */
  public BatchPurger where(String condition) {
    return new BatchPurger(dataSource, table, timeColumn, key, condition, oldestFirst);
  }

  /**
   * Deletes the rows before {@code cutoff}, batch by batch, until a batch deletes fewer than
   * {@code batchSize} rows or {@code maxBatches} batches ran.
   *
   * @param what how errors name what was purged, e.g. {@code the outbox}
   * @param progress receives the running total after each batch that deleted rows
   * @param filterArgs the parameters of the {@link #where} condition, in order
   * @return the number of rows deleted
   * @throws DatabaseUnavailableException naming {@code what} and the rows deleted before the failure, when the
   *     database is unreachable ({@link io.converge.core.DatabaseRefusedException} when it refuses a statement)
   */
  public long purge(String what, Cutoff cutoff, int batchSize, long maxBatches, LongConsumer progress,
      Object... filterArgs) {
    String sql = "DELETE FROM " + table + " WHERE " + key + " IN (SELECT " + key + " FROM " + table + " WHERE "
        + condition(cutoff)
        + (oldestFirst ? " ORDER BY " + timeColumn : "") + " LIMIT ?)";
    long total = batches(dataSource, what, sql, maxBatches, batchSize, ps -> {
      int i = bind(ps, cutoff, filterArgs);
      ps.setInt(i, batchSize);
    }, progress);
    if (total > 0) {
      LOG.debug("Purged {} rows of {} with {} {}", total, table, timeColumn, cutoff);
    }
    return total;
  }

  /** Binds a batch statement's parameters, before each batch. */
  @FunctionalInterface
  public interface Binder {

    /** Binds {@code ps}'s parameters. */
    void bind(PreparedStatement ps) throws SQLException;
  }

  /**
   * A purge whose batch is a statement of the caller's own (a {@code DELETE} bounded by a {@code LIMIT}, e.g. all the
   * rows of the oldest N finished branches): run as {@link #purge} runs its own, one autocommitted statement per batch
   * on a connection borrowed for it, until a batch deletes nothing or {@code maxBatches} ran.
   *
   * @return the number of rows deleted
   * @throws DatabaseUnavailableException naming {@code what} and the rows deleted before the failure, when the
   *     database is unreachable ({@link io.converge.core.DatabaseRefusedException} when it refuses a statement)
   */
  public static long repeat(DataSource dataSource, String what, String deleteSql, long maxBatches, Binder binder) {
    return batches(Objects.requireNonNull(dataSource, "dataSource"), what, deleteSql, maxBatches, 1, binder,
        total -> {
        });
  }

  /** Runs {@code sql} batch after batch, until one deletes fewer than {@code stopBelow} rows. */
  private static long batches(DataSource dataSource, String what, String sql, long maxBatches, int stopBelow,
      Binder binder, LongConsumer progress) {
    long total = 0;
    for (long batch = 0; batch < maxBatches; batch++) {
      int deleted;
      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(true);
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          binder.bind(ps);
          deleted = ps.executeUpdate();
        }
      } catch (SQLException e) {
        throw DatabaseErrors.translate("Cannot purge " + what + " after " + total + " rows", null, e);
      }
      total += deleted;
      if (deleted > 0) {
        progress.accept(total);
      }
      if (deleted < stopBelow) {
        break;
      }
    }
    return total;
  }

  /**
   * How many rows {@link #purge} would delete now (a dry run).
   *
   * @throws DatabaseUnavailableException naming {@code what}, when the database is unreachable
   *     ({@link io.converge.core.DatabaseRefusedException} when it refuses the statement)
   */
  public long count(String what, Cutoff cutoff, Object... filterArgs) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + table + " WHERE " + condition(cutoff))) {
      bind(ps, cutoff, filterArgs);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot count the purgeable rows of " + what, null, e);
    }
  }

  private String condition(Cutoff cutoff) {
    return (filter == null ? "" : filter + " AND ") + timeColumn + " < " + cutoff.sql();
  }

  /** Binds the filter's and the cutoff's parameters; returns the index of the next one. */
  private static int bind(PreparedStatement ps, Cutoff cutoff, Object[] filterArgs) throws SQLException {
    int i = 1;
    for (Object arg : filterArgs) {
      ps.setObject(i++, arg);
    }
    cutoff.bind(ps, i++);
    return i;
  }

  /**
   * Which rows are old enough to purge: those older than an age by the database's clock (one clock for
   * every instance, the clock that wrote the rows), or those before an instant. Immutable.
   */
  public static final class Cutoff {

    private final Duration age;
    private final Instant instant;

    private Cutoff(Duration age, Instant instant) {
      this.age = age;
      this.instant = instant;
    }

    /** Rows whose time is more than {@code age} before the database's {@code now()} (zero: before now). */
    public static Cutoff olderThan(Duration age) {
      return new Cutoff(Require.notNegative("retention", age), null);
    }

    /** Rows whose time is before {@code instant}. */
    public static Cutoff before(Instant instant) {
      return new Cutoff(null, Objects.requireNonNull(instant, "instant"));
    }

    String sql() {
      return age != null ? "now() - make_interval(secs => ?)" : "?";
    }

    void bind(PreparedStatement ps, int index) throws SQLException {
      if (age != null) {
        ps.setDouble(index, age.toMillis() / 1000.0);
      } else {
        ps.setTimestamp(index, Timestamp.from(instant));
      }
    }

    @Override
    public String toString() {
      return age != null ? "older than " + age : "before " + instant;
    }
  }
}
