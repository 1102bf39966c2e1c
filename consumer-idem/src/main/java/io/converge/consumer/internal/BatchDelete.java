package io.converge.consumer.internal;

import io.converge.producer.ConvergeException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the rows of a table older than a cutoff in batches, each its own short transaction, so that
 * a table stays bounded without a long lock (a 100k-row DELETE stalls a hot table). Thread-safe;
 * several instances may purge at once (they delete disjoint or already-deleted rows).
 */
public final class BatchDelete {

  private static final Logger log = LoggerFactory.getLogger(BatchDelete.class);

  private final DataSource dataSource;
  private final String table;
  private final String timeColumn;
  private final String sql;
  private final int batchSize;

  /**
   * Batches of {@code batchSize} rows of {@code table} whose {@code timeColumn} is before the cutoff.
   *
   * @param batchSizeProperty the property named when {@code batchSize} is not 1..100000
   */
  public BatchDelete(DataSource dataSource, String table, String timeColumn, int batchSize, String batchSizeProperty) {
    if (batchSize < 1 || batchSize > 100_000) {
      throw new IllegalArgumentException(batchSizeProperty + " must be between 1 and 100000, but was " + batchSize);
    }
    this.dataSource = dataSource;
    this.table = table;
    this.timeColumn = timeColumn;
    this.batchSize = batchSize;
    this.sql = "DELETE FROM " + table + " WHERE ctid IN (SELECT ctid FROM " + table + " WHERE " + timeColumn
        + " < ? LIMIT ?)";
  }

  /** Deletes every row before {@code cutoff}, stopping after {@code maxBatches}; returns the number deleted. */
  public long purge(Instant cutoff, int maxBatches) {
    Timestamp at = Timestamp.from(cutoff);
    long total = 0;
    for (int i = 0; i < maxBatches; i++) {
      int deleted;
      try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
        c.setAutoCommit(true);
        ps.setTimestamp(1, at);
        ps.setInt(2, batchSize);
        deleted = ps.executeUpdate();
      } catch (SQLException e) {
        throw new ConvergeException("Could not purge " + table + " rows with " + timeColumn + " before " + cutoff
            + " after " + total + " rows", e);
      }
      total += deleted;
      if (deleted < batchSize) {
        break;
      }
    }
    if (total > 0) {
      log.info("Purged {} {} rows with {} before {}", total, table, timeColumn, cutoff);
    }
    return total;
  }
}
