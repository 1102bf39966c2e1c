package io.converge.consumer.http;

import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.BatchPurger.Cutoff;
import io.converge.core.internal.Require;
import java.time.Clock;
import java.time.Duration;
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

  private final BatchPurger purger;
  private final int batchSize;

  /**
   * A purger; a key is expired by the database's clock ({@code now()}), the clock that wrote its expiry.
   *
   * @param batchSize 1..100000
   * @throws IllegalArgumentException naming the bad value
   */
  public IdempotencyKeyPurger(DataSource dataSource, int batchSize) {
    this.purger = BatchPurger.of(dataSource, "converge_idempotency_key", "expires_at");
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

  /**
   * Deletes every expired key, batch by batch, stopping after {@code maxBatches}.
   *
   * @return the number of rows deleted
   */
  public long purgeExpired(int maxBatches) {
    // an instance whose clock runs ahead would purge keys before their TTL: the database's clock decides
    return purger.purge("expired Idempotency-Keys", Cutoff.olderThan(Duration.ZERO), batchSize, maxBatches, n -> {
    });
  }
}
