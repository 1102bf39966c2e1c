package io.converge.outbox;

import io.converge.outbox.internal.OutboxRows;
import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.BatchPurger.Cutoff;
import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.DayPartitions;
import io.converge.core.internal.OpsRows;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Objects;
import java.util.function.LongConsumer;
import javax.sql.DataSource;

/**
 * Operations on the outbox table of one database, for the relay and the ops tools: parked keys, resume,
 * lag, purge. Stateless apart from its data source; thread-safe.
 */
public final class Outbox {

  /**
   * A parked row: the head of a key's line (its rows of one tenant on one topic) whose send the broker kept
   * refusing. The line's later rows wait; the key's rows of other tenants and topics do not.
   *
   * @param messageId the message id
   * @param tenant the tenant
   * @param key the order key (the message key, or its id)
   * @param topic the topic
   * @param attempts failed attempts
   * @param reason the last error
   * @param parkedAt when it was parked
   * @param createdAt when it was written
   */
  public record Parked(String messageId, String tenant, String key, String topic, int attempts, String reason,
      Instant parkedAt,
      Instant createdAt) {
  }

  private static final String PARKED = """
      SELECT message_id, tenant, order_key, topic, attempts, last_error, parked_at, created_at
      FROM converge_outbox WHERE published_at IS NULL AND parked_at IS NOT NULL ORDER BY seq LIMIT ?
      """;
  private static final String PARKED_COUNT = "SELECT count(*) FROM converge_outbox WHERE published_at IS NULL AND parked_at IS NOT NULL";
  /** The age of the oldest row that lags: unpublished, not parked, not behind a parked row of its line. */
  static final String OLDEST_MILLIS = """
      SELECT (extract(epoch FROM now() - o.created_at) * 1000)::bigint FROM converge_outbox o
      WHERE o.published_at IS NULL AND o.parked_at IS NULL
        AND NOT EXISTS (%s)
      ORDER BY o.seq LIMIT 1
      """.formatted(OutboxLines.EARLIER_PARKED);
  /** The days after today whose partitions {@link #purge} creates ahead (today's too). */
  public static final int PARTITIONS_AHEAD = 3;
  private static final String PARENT = "converge_outbox";
  /** A day partition's primary key: the parent has none (V5); the one sequence keeps seq unique across partitions. */
  private static final String PARTITION_KEY = "ALTER TABLE %s ADD PRIMARY KEY (seq)";
  private final DataSource dataSource;

  private Outbox(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** The outbox on {@code dataSource} (whose schema has the {@code outbox} migrations applied). */
  public static Outbox on(DataSource dataSource) {
    return new Outbox(Objects.requireNonNull(dataSource, "dataSource"));
  }

  /**
   * The parked rows, oldest first, at most {@code limit}.
   *
   * @throws IllegalArgumentException when {@code limit} is below 1
   */
  public List<Parked> parked(int limit) {
    return rows().list("the parked outbox rows", PARKED, limit, Integer.MAX_VALUE,
        rs -> new Parked(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getInt(5),
            rs.getString(6), instant(rs.getTimestamp(7)), instant(rs.getTimestamp(8))));
  }

  /** How many rows are parked. */
  public long parkedCount() {
    return rows().count("the parked outbox rows", PARKED_COUNT);
  }

  /**
   * Resumes the parked key {@code key}: {@code resume(null, null, key)}.
   *
   * @return the number of rows resumed (0 when the key was not parked)
   * @throws AmbiguousKeyException when the key is parked for more than one tenant or topic (nothing resumed)
   */
  public int resume(String key) {
    return resume(null, null, key);
  }

  /**
   * Resumes the parked line of {@code key} of {@code tenant} on {@code topic}: its rows are retried by the
   * relays from the next poll, with a fresh attempt count. A null tenant or topic matches any, as long as
   * one parked line of the key matches.
   *
   * @return the number of rows resumed (0 when no such line was parked)
   * @throws AmbiguousKeyException when more than one parked line of the key matches (nothing resumed)
   */
  public int resume(String tenant, String topic, String key) {
    Objects.requireNonNull(key, "key");
    try (Connection c = dataSource.getConnection()) {
      return new OutboxRows().resume(c, tenant, topic, key);
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot resume outbox key " + key, null, e);
    }
  }

  /**
   * Resumes the line (tenant, topic, key) of the parked row {@code messageId}, as {@link #resume(String,
   * String, String)} does; the console's action.
   *
   * @return the number of rows resumed (0 when that row is not parked)
   */
  public int resumeLineOf(String messageId) {
    Objects.requireNonNull(messageId, "messageId");
    try (Connection c = dataSource.getConnection()) {
      return new OutboxRows().resumeLineOf(c, messageId);
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot resume the outbox line of message " + messageId, messageId, e);
    }
  }

  /**
   * The age of the oldest unpublished row that is neither parked nor behind a parked row of its line (tenant,
   * topic, key); zero when there is none.
   */
  public Duration lag() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(OLDEST_MILLIS);
        ResultSet rs = ps.executeQuery()) {
      return rs.next() ? Duration.ofMillis(Math.max(0, rs.getLong(1))) : Duration.ZERO;
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot read the outbox lag", null, e);
    }
  }

  /**
   * Keeps the outbox bounded (outbox-relay README, "Partitions by day"): creates the day partitions of today and the
   * next {@link #PARTITIONS_AHEAD} days that are missing, drops whole the day partitions before the cutoff's day whose
   * rows are all published, the newest before the cutoff (now minus {@code retention}, by the database's clock), then
   * deletes the published rows older than {@code retention} of the catch-all and of the older day partitions that
   * were kept, in batches of {@code batchSize} rows, each in its own short transaction (no long lock, no DELETE
   * storm). Unpublished and parked rows are never deleted, and a partition holding one is never dropped. A partition
   * whose lock is not had within {@link DayPartitions#DEFAULT_LOCK_TIMEOUT} is left to the next run (logged).
   *
   * @param progress receives the running total after each batch (e.g. to print progress)
   * @return the number of rows deleted by the batches (those of dropped partitions are logged, not counted)
   */
  public long purge(Duration retention, int batchSize, LongConsumer progress) {
    Cutoff cutoff = cutoff(retention);
    Require.between("outbox.purgeBatchSize", batchSize, 1, BatchPurger.MAX_BATCH_SIZE);
    Instant now = databaseNow();
    DayPartitions partitions = partitions(dataSource);
    partitions.createAhead(LocalDate.ofInstant(now, ZoneOffset.UTC), PARTITIONS_AHEAD + 1);
    Instant before = now.minus(retention);
    LocalDate beforeDay = LocalDate.ofInstant(before, ZoneOffset.UTC);
    partitions.dropExpired(beforeDay, before);
    // the later day partitions are dropped whole once their day is before the cutoff's: no row-by-row DELETE there
    return published().where("day < ?").purge("the outbox", cutoff, batchSize, Long.MAX_VALUE, progress, beforeDay);
  }

  /**
   * The day partitions of {@code converge_outbox} in {@code dataSource}'s schema (for a health check): each has its own
   * primary key on seq; none is dropped while it holds an unpublished row (parked or not).
   */
  public static DayPartitions partitions(DataSource dataSource) {
    return DayPartitions.of(dataSource, PARENT, PARTITION_KEY, "published_at").keptWhile("published_at IS NULL");
  }

  private Instant databaseNow() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT now()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getTimestamp(1).toInstant();
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot read the database's time", null, e);
    }
  }

  /**
   * How many rows {@link #purge} would delete now: published rows older than {@code retention} (for a
   * dry run). An upper bound: such a row in the partition of a day not before the cutoff's waits until that
   * partition is dropped whole.
   */
  public long purgeable(Duration retention) {
    return published().count("the outbox", cutoff(retention));
  }

  /** The parked rows' views (list, count). */
  private OpsRows rows() {
    return OpsRows.on(dataSource);
  }

  /**
   * Published rows, oldest first; unpublished and parked rows have no {@code published_at} and are never purged. Keyed
   * by seq, unique across the partitions.
   */
  private BatchPurger published() {
    return BatchPurger.of(dataSource, "converge_outbox", "published_at").keyedBy("seq").oldestFirst();
  }

  private static Cutoff cutoff(Duration retention) {
    Require.notNegative("outbox.retention", retention);
    return Cutoff.olderThan(retention);
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
