package io.converge.consumer.http;

import io.converge.consumer.internal.BatchDelete;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
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

  private final DataSource dataSource;
  private final BatchDelete delete;

  /**
   * A purger; a key is expired by the database's clock ({@code now()}), the clock that wrote its expiry.
   *
   * @param batchSize 1..100000
   * @throws IllegalArgumentException naming the bad value
   */
  public IdempotencyKeyPurger(DataSource dataSource, int batchSize) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.delete = new BatchDelete(dataSource, "converge_idempotency_key", "expires_at", batchSize,
        "converge.idempotency.purge-batch-size");
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
    Instant now;
    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT now()")) {
      rs.next();
      now = rs.getTimestamp(1).toInstant();
    } catch (SQLException e) {
      throw new IdempotencyException(IdempotencyProblem.STORE_UNAVAILABLE, "Cannot read the database's clock to purge "
          + "expired Idempotency-Keys: " + e.getMessage(), null, null, e);
    }
    return delete.purge(now, maxBatches);
  }
}
