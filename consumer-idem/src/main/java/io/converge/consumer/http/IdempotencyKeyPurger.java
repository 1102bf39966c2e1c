package io.converge.consumer.http;

import io.converge.consumer.internal.BatchDelete;
import java.time.Clock;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Deletes expired rows of {@code converge_idempotency_key} (past {@code expires_at}: claim + TTL) in
 * small batches, each its own short transaction. An expired key is already treated as new by the
 * filter, so purging changes no answer; it only keeps the table bounded. Thread-safe; several
 * instances may purge at once.
 */
public final class IdempotencyKeyPurger {

  /** The default rows per batch. */
  public static final int DEFAULT_BATCH_SIZE = 1_000;

  private final BatchDelete delete;
  private final Clock clock;

  /**
   * A purger.
   *
   * @param batchSize 1..100000
   * @throws IllegalArgumentException naming the bad value
   */
  public IdempotencyKeyPurger(DataSource dataSource, int batchSize, Clock clock) {
    Objects.requireNonNull(dataSource, "dataSource");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.delete = new BatchDelete(dataSource, "converge_idempotency_key", "expires_at", batchSize,
        "converge.idempotency.purge-batch-size");
  }

  /**
   * Deletes every expired key, batch by batch, stopping after {@code maxBatches}.
   *
   * @return the number of rows deleted
   */
  public long purgeExpired(int maxBatches) {
    return delete.purge(clock.instant(), maxBatches);
  }
}
