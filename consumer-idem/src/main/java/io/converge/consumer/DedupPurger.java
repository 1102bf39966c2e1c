package io.converge.consumer;

import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.BatchPurger.Cutoff;
import io.converge.core.internal.Require;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;

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

  /** The default retention. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
  /** The shortest retention accepted: longer than RocketMQ's ~4h46m redelivery window. */
  public static final Duration MIN_RETENTION = Duration.ofHours(6);
  /** The default rows per batch. */
  public static final int DEFAULT_BATCH_SIZE = 1_000;

  private final BatchPurger purger;
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
    this.purger = BatchPurger.of(dataSource, "converge_dedup", "processed_at");
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
    Cutoff cutoff = Cutoff.before(clock.instant().minus(retention));
    return purger.purge("converge_dedup rows " + cutoff, cutoff, batchSize, maxBatches, n -> {
    });
  }
}
