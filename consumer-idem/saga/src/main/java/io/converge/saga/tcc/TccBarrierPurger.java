package io.converge.saga.tcc;

import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the rows of the FINISHED branches of {@code converge_tcc_barrier}: a branch whose {@code confirm} or
 * {@code cancel} row is older than the {@link TccRetention} loses all its rows (try, confirm, cancel) at once, in
 * small batches of branches, oldest finish first, each its own short transaction. A branch that is not finished (a
 * lone {@code try} row) is never purged, however old: the coordinator may still ask its Confirm or Cancel, which must
 * find it ({@link TccBarrierOps#unfinished} lists them for an operator). Age is counted by the database's clock, the
 * one that wrote {@code created_at}: an instance whose clock runs ahead never purges a row early. Thread-safe;
 * several instances may purge at once.
 */
public final class TccBarrierPurger {

  private static final Logger log = LoggerFactory.getLogger(TccBarrierPurger.class);

  /** The default branches per batch. */
  public static final int DEFAULT_BATCH_SIZE = 1_000;

  private static final String FINISHED = """
      SELECT tenant, global_id, branch_id FROM converge_tcc_barrier
       WHERE operation IN ('confirm', 'cancel') AND created_at < now() - make_interval(secs => ?)""";
  private static final String PURGE = "WITH done AS (" + FINISHED + """
       ORDER BY created_at LIMIT ?)
      DELETE FROM converge_tcc_barrier b USING done d
       WHERE b.tenant = d.tenant AND b.global_id = d.global_id AND b.branch_id = d.branch_id""";
  private static final String COUNT = "SELECT count(*) FROM converge_tcc_barrier b WHERE (b.tenant, b.global_id, "
      + "b.branch_id) IN (" + FINISHED + ")";

  private final DataSource dataSource;
  private final TccRetention retention;
  private final int batchSize;

  /**
   * A purger.
   *
   * @param batchSize finished branches per batch, 1..100000
   * @throws IllegalArgumentException naming the bad value
   */
  public TccBarrierPurger(DataSource dataSource, TccRetention retention, int batchSize) {
    this.retention = Require.present("tcc.retention", retention);
    this.batchSize = Require.between("tcc.purge-batch-size", batchSize, 1, BatchPurger.MAX_BATCH_SIZE);
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  /** The retention. */
  public TccRetention retention() {
    return retention;
  }

  /**
   * Deletes the rows of every branch finished longer than the retention ago, batch by batch, stopping after
   * {@code maxBatches}.
   *
   * @return the number of rows deleted
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public long purgeExpired(int maxBatches) {
    Require.between("tcc.purge.maxBatches", maxBatches, 1, Integer.MAX_VALUE);
    long total = BatchPurger.repeat(dataSource, "the finished TCC branches", PURGE, maxBatches, ps -> {
      ps.setDouble(1, retention.retention().toSeconds());
      ps.setInt(2, batchSize);
    });
    if (total > 0) {
      log.info("TCC barrier purge: {} rows of branches finished more than {} ago deleted", total,
          retention.retention());
    }
    return total;
  }

  /** How many rows {@link #purgeExpired} would delete now. */
  public long countExpired() {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(COUNT)) {
      ps.setDouble(1, retention.retention().toSeconds());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot count the finished TCC branches to purge", null, e);
    }
  }
}
