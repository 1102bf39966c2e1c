package io.converge.saga.tcc;

import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.BatchPurger.Cutoff;
import io.converge.core.internal.Require;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Deletes the rows of {@code converge_tcc_barrier} older than the {@link TccRetention} in small batches, oldest first,
 * each its own short transaction (the shared {@link BatchPurger}). Age is counted by the database's clock, the one
 * that wrote {@code created_at}: an instance whose clock runs ahead never purges a row early. Thread-safe; several
 * instances may purge at once.
 */
public final class TccBarrierPurger {

  /** The default rows per batch. */
  public static final int DEFAULT_BATCH_SIZE = 1_000;

  private final BatchPurger purger;
  private final TccRetention retention;
  private final int batchSize;

  /**
   * A purger.
   *
   * @param batchSize 1..100000
   * @throws IllegalArgumentException naming the bad value
   */
  public TccBarrierPurger(DataSource dataSource, TccRetention retention, int batchSize) {
    this.retention = Require.present("tcc.retention", retention);
    this.batchSize = Require.between("tcc.purge-batch-size", batchSize, 1, BatchPurger.MAX_BATCH_SIZE);
    this.purger = BatchPurger.of(Objects.requireNonNull(dataSource, "dataSource"), "converge_tcc_barrier",
        "created_at").oldestFirst();
  }

  /** The retention. */
  public TccRetention retention() {
    return retention;
  }

  /**
   * Deletes every row older than the retention, batch by batch, stopping after {@code maxBatches}.
   *
   * @return the number of rows deleted
   */
  public long purgeExpired(int maxBatches) {
    Cutoff cutoff = Cutoff.olderThan(retention.retention());
    return purger.purge("converge_tcc_barrier rows " + cutoff, cutoff, batchSize, maxBatches, n -> {
    });
  }

  /** How many rows {@link #purgeExpired} would delete now. */
  public long countExpired() {
    return purger.count("converge_tcc_barrier", Cutoff.olderThan(retention.retention()));
  }
}
