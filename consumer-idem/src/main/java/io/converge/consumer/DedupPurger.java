package io.converge.consumer;

import io.converge.producer.ConvergeException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes dedup rows older than the retention in small batches, each its own short transaction, so
 * that the table stays bounded without a long lock (a 100k-row DELETE stalls a hot table). The
 * retention must outlive every redelivery: RocketMQ redelivers a failed message 16 times over about
 * 4 h 46 min, and a producer's recovery may re-publish after an outage, so the floor is 6 hours and
 * the default 7 days. A duplicate arriving after its row was purged would run the handler again.
 *
 * <p>Thread-safe; several instances may purge at once (they delete disjoint or already-deleted rows).
 */
public final class DedupPurger {

  private static final Logger log = LoggerFactory.getLogger(DedupPurger.class);

  /** The default retention. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
  /** The shortest retention accepted: longer than RocketMQ's ~4h46m redelivery window. */
  public static final Duration MIN_RETENTION = Duration.ofHours(6);
  /** The default rows per batch. */
  public static final int DEFAULT_BATCH_SIZE = 1_000;

  private static final String PURGE = """
      DELETE FROM converge_dedup WHERE ctid IN (
        SELECT ctid FROM converge_dedup WHERE processed_at < ? LIMIT ?)
      """;

  private final DataSource dataSource;
  private final Duration retention;
  private final int batchSize;
  private final Clock clock;

  /**
   * A purger.
   *
   * @param retention at least {@link #MIN_RETENTION}
   * @param batchSize 1..100000
   * @throws IllegalArgumentException naming the bad value
   */
  public DedupPurger(DataSource dataSource, Duration retention, int batchSize, Clock clock) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.clock = Objects.requireNonNull(clock, "clock");
    if (retention == null || retention.compareTo(MIN_RETENTION) < 0) {
      throw new IllegalArgumentException("converge.consumer.dedup.retention must be at least " + MIN_RETENTION
          + " (longer than the broker's redelivery window), but was " + retention);
    }
    if (batchSize < 1 || batchSize > 100_000) {
      throw new IllegalArgumentException("converge.consumer.dedup.purge-batch-size must be between 1 and 100000, but was " + batchSize);
    }
    this.retention = retention;
    this.batchSize = batchSize;
  }

  /** The retention. */
  public Duration retention() {
    return retention;
  }

  /**
   * Deletes every row older than the retention, batch by batch, stopping after {@code maxBatches}.
   *
   * @return the number of rows deleted
   */
  public long purgeExpired(int maxBatches) {
    Timestamp cutoff = Timestamp.from(clock.instant().minus(retention));
    long total = 0;
    for (int i = 0; i < maxBatches; i++) {
      int deleted;
      try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(PURGE)) {
        c.setAutoCommit(true);
        ps.setTimestamp(1, cutoff);
        ps.setInt(2, batchSize);
        deleted = ps.executeUpdate();
      } catch (SQLException e) {
        throw new ConvergeException("Could not purge converge_dedup older than " + cutoff + " after " + total + " rows", e);
      }
      total += deleted;
      if (deleted < batchSize) {
        break;
      }
    }
    if (total > 0) {
      log.info("Purged {} converge_dedup rows older than {}", total, cutoff);
    }
    return total;
  }
}
