package io.converge.outbox;

import io.converge.outbox.internal.OutboxRows;
import io.converge.producer.DatabaseUnavailableException;
import io.converge.producer.support.BatchPurger;
import io.converge.producer.support.BatchPurger.Cutoff;
import io.converge.producer.support.OpsRows;
import io.converge.producer.support.Require;
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
   * A parked row: the head of a key whose send the broker kept refusing. The key's later rows wait.
   *
   * @param messageId the message id
   * @param key the order key (the message key, or its id)
   * @param topic the topic
   * @param attempts failed attempts
   * @param reason the last error
   * @param parkedAt when it was parked
   * @param createdAt when it was written
   */
  public record Parked(String messageId, String key, String topic, int attempts, String reason, Instant parkedAt,
      Instant createdAt) {
  }

  private static final String PARKED = """
      SELECT message_id, order_key, topic, attempts, last_error, parked_at, created_at
      FROM converge_outbox WHERE published_at IS NULL AND parked_at IS NOT NULL ORDER BY seq LIMIT ?
      """;
  private static final String PARKED_COUNT = "SELECT count(*) FROM converge_outbox WHERE published_at IS NULL AND parked_at IS NOT NULL";
  private static final String OLDEST_MILLIS = """
      SELECT (extract(epoch FROM now() - o.created_at) * 1000)::bigint FROM converge_outbox o
      WHERE o.published_at IS NULL AND o.parked_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM converge_outbox p WHERE p.order_key = o.order_key AND p.seq < o.seq
                        AND p.published_at IS NULL AND p.parked_at IS NOT NULL)
      ORDER BY o.seq LIMIT 1
      """;
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
        rs -> new Parked(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4), rs.getString(5),
            instant(rs.getTimestamp(6)), instant(rs.getTimestamp(7))));
  }

  /** How many rows are parked. */
  public long parkedCount() {
    return rows().count("the parked outbox rows", PARKED_COUNT);
  }

  /**
   * Resumes the parked key {@code key}: its rows are retried by the relays from the next poll, with a
   * fresh attempt count.
   *
   * @return the number of rows resumed (0 when the key was not parked)
   */
  public int resume(String key) {
    try (Connection c = dataSource.getConnection()) {
      return new OutboxRows().resume(c, key);
    } catch (SQLException e) {
      throw new DatabaseUnavailableException("Cannot resume outbox key " + key, null, e);
    }
  }

  /** The age of the oldest unpublished row that is neither parked nor behind a parked row of its key; zero when there is none. */
  public Duration lag() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(OLDEST_MILLIS);
        ResultSet rs = ps.executeQuery()) {
      return rs.next() ? Duration.ofMillis(Math.max(0, rs.getLong(1))) : Duration.ZERO;
    } catch (SQLException e) {
      throw new DatabaseUnavailableException("Cannot read the outbox lag", null, e);
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
