package io.converge.consumer.http;

import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.BatchPurger.Cutoff;
import io.converge.core.internal.DayPartitions;
import io.converge.core.internal.Require;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDate;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Keeps {@code converge_idempotency_key} bounded (consumer-idem README, "Idempotency-Key partitions by day"): creates
 * the day partitions of today and the next {@link #PARTITIONS_AHEAD} days, drops whole the day partitions in which
 * every key has expired (no DELETE of each row: no WAL per row, no dead tuples), and deletes the catch-all partition's
 * expired rows (past {@code expires_at}: claim + TTL) in small batches, each its own short transaction. An expired key
 * is already treated as new by the filter, so purging changes no answer; it only keeps the table bounded. Days and
 * expiry are the database's clock ({@code now()}), the clock that wrote them. Thread-safe; several instances may purge
 * at once.
 */
public final class IdempotencyKeyPurger {

  /** The default rows per batch. */
  public static final int DEFAULT_BATCH_SIZE = 1_000;
  /** The days after today whose partitions are created ahead (today's too). */
  public static final int PARTITIONS_AHEAD = 3;
  private static final String PARENT = "converge_idempotency_key";
  /**
   * Each day partition's primary key (the parent has none, see idempotency V5) and the index that makes the drop's
   * check under its lock one probe: a row is needed until its expiry and, while a handler still runs, its lease.
   */
  private static final String PARTITION_DDL = "ALTER TABLE %1$s ADD PRIMARY KEY (tenant, idem_key); "
      + "CREATE INDEX ON %1$s ((greatest(expires_at, leased_until)))";
  private static final String NEEDED_UNTIL = "greatest(expires_at, leased_until)";

  private final BatchPurger purger;
  private final DayPartitions partitions;
  private final int batchSize;

  /**
   * A purger; a key is expired by the database's clock ({@code now()}), the clock that wrote its expiry.
   *
   * @param batchSize 1..100000
   * @throws IllegalArgumentException naming the bad value
   */
  public IdempotencyKeyPurger(DataSource dataSource, int batchSize) {
    Objects.requireNonNull(dataSource, "dataSource");
    this.purger = BatchPurger.of(dataSource, PARENT + "_catchall", "expires_at");
    this.partitions = partitions(dataSource);
    this.batchSize = Require.between("converge.idempotency.purge-batch-size", batchSize, 1, BatchPurger.MAX_BATCH_SIZE);
  }

  /**
   * A purger; {@code clock} is ignored.
   *
   * @deprecated the database's clock decides expiry (issue 13.8): use {@link #IdempotencyKeyPurger(DataSource, int)}
   */
  @Deprecated
  public IdempotencyKeyPurger(DataSource dataSource, int batchSize, Clock clock) {
    this(dataSource, batchSize);
  }

  /** The day partitions of {@code converge_idempotency_key} in {@code dataSource}'s schema (for a health check). */
  public static DayPartitions partitions(DataSource dataSource) {
    return DayPartitions.of(dataSource, PARENT, PARTITION_DDL, NEEDED_UNTIL);
  }

  /**
   * Creates the partitions of today and the {@link #PARTITIONS_AHEAD} next days that are missing, drops the day
   * partitions before today whose every row is past both its expiry and its lease (checked again under the drop's
   * lock), then deletes the catch-all's expired rows, batch by batch, stopping after {@code maxBatches}. A partition
   * whose lock is not had within {@link DayPartitions#DEFAULT_LOCK_TIMEOUT} is left to the next run (logged).
   *
   * @return the number of catch-all rows deleted
   */
  public long purgeExpired(int maxBatches) {
    // an instance whose clock runs ahead would purge keys before their TTL: the database's clock decides
    Cutoff now = Cutoff.olderThan(Duration.ZERO);
    LocalDate today = partitions.databaseDay();
    partitions.createAhead(today, PARTITIONS_AHEAD + 1);
    partitions.dropExpired(today, now);
    return purger.purge("expired Idempotency-Keys", now, batchSize, maxBatches, n -> {
    });
  }
}
