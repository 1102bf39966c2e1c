package io.converge.outbox;

import io.converge.outbox.internal.OutboxRows;
import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.BatchPurger.Cutoff;
import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.OpsRows;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
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
   * Deletes published rows older than {@code retention}, in batches of {@code batchSize} rows, each in
   * its own short transaction (no long lock, no DELETE storm). Unpublished and parked rows are never
   * deleted.
   *
   * @param progress receives the running total after each batch (e.g. to print progress)
   * @return the number of rows deleted
   */
  public long purge(Duration retention, int batchSize, LongConsumer progress) {
    Cutoff cutoff = cutoff(retention);
    Require.between("outbox.purgeBatchSize", batchSize, 1, BatchPurger.MAX_BATCH_SIZE);
    return published().purge("the outbox", cutoff, batchSize, Long.MAX_VALUE, progress);
  }

  /**
   * How many rows {@link #purge} would delete now: published rows older than {@code retention} (for a
   * dry run).
   */
  public long purgeable(Duration retention) {
    return published().count("the outbox", cutoff(retention));
  }

  /** The parked rows' views (list, count). */
  private OpsRows rows() {
    return OpsRows.on(dataSource);
  }

  /** Published rows, oldest first; unpublished and parked rows have no {@code published_at} and are never purged. */
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
