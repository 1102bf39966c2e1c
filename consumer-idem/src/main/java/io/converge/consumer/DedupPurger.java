package io.converge.consumer;

import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.BatchPurger.Cutoff;
import io.converge.core.internal.DayPartitions;
import io.converge.core.internal.Require;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Keeps {@code converge_dedup} bounded (consumer-idem README, "Partitions by day"): creates the day partitions of
 * today and the next {@link #PARTITIONS_AHEAD} days, drops whole the day partitions whose newest claim is older than
 * the retention (no DELETE of each row: no WAL per row, no dead tuples), and deletes the catch-all partition's rows
 * older than the retention in small batches, each its own short transaction, so that the table stays bounded without
 * a long lock (a 100k-row DELETE stalls a hot table). The
 * retention must outlive every redelivery: RocketMQ redelivers a failed message 16 times over about
 * 4 h 46 min, and a producer's recovery may re-publish after an outage, so the floor is 6 hours and
 * the default 7 days. A duplicate arriving after its row was purged would run the handler again.
 *
 * <p>Thread-safe; several instances may purge at once (they delete disjoint or already-deleted rows).
 */
public final class DedupPurger {

  /** The default retention. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
  /** The shortest retention accepted: longer than RocketMQ's ~4h46m redelivery window. */
  public static final Duration MIN_RETENTION = Duration.ofHours(6);
  /** The default rows per batch. */
  public static final int DEFAULT_BATCH_SIZE = 1_000;
  /** The days after today whose partitions are created ahead (today's too). */
  public static final int PARTITIONS_AHEAD = 3;
  /** The dedup table's day partitions: each has its own primary key (the parent has none, see V7). */
  private static final String PARENT = "converge_dedup";
  private static final String PARTITION_KEY = "ALTER TABLE %s ADD PRIMARY KEY (tenant, consumer_group, message_id)";

  private final BatchPurger purger;
  private final DayPartitions partitions;
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
    Objects.requireNonNull(dataSource, "dataSource");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.retention = Require.atLeast("converge.consumer.dedup.retention", retention, MIN_RETENTION,
        MIN_RETENTION + " (longer than the broker's redelivery window)");
    this.batchSize = Require.between("converge.consumer.dedup.purge-batch-size", batchSize, 1,
        BatchPurger.MAX_BATCH_SIZE);
    this.purger = BatchPurger.of(dataSource, "converge_dedup_catchall", "processed_at");
    this.partitions = partitions(dataSource);
  }

  /** The day partitions of {@code converge_dedup} in {@code dataSource}'s schema (for a health check). */
  public static DayPartitions partitions(DataSource dataSource) {
    return DayPartitions.of(dataSource, PARENT, PARTITION_KEY, "processed_at");
  }

  /** The retention. */
  public Duration retention() {
    return retention;
  }

  /**
   * Creates the partitions of today and the {@link #PARTITIONS_AHEAD} next days that are missing, drops the expired
   * day partitions (before the cutoff's day, newest claim before the cutoff), then deletes the catch-all's rows older
   * than the retention, batch by batch, stopping after {@code maxBatches}. A partition whose lock is not had within
   * {@link DayPartitions#DEFAULT_LOCK_TIMEOUT} is left to the next run (logged).
   *
   * @return the number of catch-all rows deleted
   */
  public long purgeExpired(int maxBatches) {
    Instant now = clock.instant();
    partitions.createAhead(LocalDate.ofInstant(now, ZoneOffset.UTC), PARTITIONS_AHEAD + 1);
    Instant before = now.minus(retention);
    partitions.dropExpired(LocalDate.ofInstant(before, ZoneOffset.UTC), before);
    Cutoff cutoff = Cutoff.before(before);
    return purger.purge("converge_dedup_catchall rows " + cutoff, cutoff, batchSize, maxBatches, n -> {
    });
  }
}
