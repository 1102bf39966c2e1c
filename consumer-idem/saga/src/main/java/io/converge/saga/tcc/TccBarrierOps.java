package io.converge.saga.tcc;

import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * What an operator (the console) reads of a participant's {@code converge_tcc_barrier}: the branches whose Try was
 * refused as hanging, most recent first; the old unfinished branches (a Try that ran, neither confirmed nor cancelled
 * here: never purged, their frozen resources wait for the coordinator), oldest first. Read-only; thread-safe.
 */
public final class TccBarrierOps {

  private static final String REFUSED = """
      SELECT tenant, global_id, branch_id, created_at, refusals, refused_at FROM converge_tcc_barrier
       WHERE refusals > 0 ORDER BY refused_at DESC LIMIT ?""";
  private static final String COUNT = "SELECT count(*) FROM converge_tcc_barrier WHERE refusals > 0";

  private static final String UNFINISHED_WHERE = """
      FROM converge_tcc_barrier t
      WHERE t.operation = 'try' AND t.origin = 'try' AND t.created_at < now() - make_interval(secs => ?)
        AND NOT EXISTS (SELECT 1 FROM converge_tcc_barrier f
                         WHERE f.tenant = t.tenant AND f.global_id = t.global_id AND f.branch_id = t.branch_id
                           AND f.operation IN ('confirm', 'cancel'))""";
  private static final String UNFINISHED = "SELECT t.tenant, t.global_id, t.branch_id, t.created_at " + UNFINISHED_WHERE
      + " ORDER BY t.created_at LIMIT ?";
  private static final String COUNT_UNFINISHED = "SELECT count(*) " + UNFINISHED_WHERE;

  private final DataSource dataSource;

  private TccBarrierOps(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Reads {@code dataSource}'s barrier. */
  public static TccBarrierOps of(DataSource dataSource) {
    return new TccBarrierOps(Objects.requireNonNull(dataSource, "dataSource"));
  }

  /**
   * A branch whose Try came after its Cancel and was refused.
   *
   * @param cancelledAt when its Cancel wrote the Try's row (an empty rollback)
   * @param refusals how many Tries were refused on it
   * @param lastRefusedAt the last refusal
   */
  public record HangingBranch(String tenant, String globalId, String branchId, Instant cancelledAt, int refusals,
      Instant lastRefusedAt) {
  }

  /**
   * The hanging branches refused, the most recently refused first.
   *
   * @param limit 1..10000
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public List<HangingBranch> hangingRefused(int limit) {
    Require.between("tcc.ops.limit", limit, 1, 10_000);
    List<HangingBranch> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(REFUSED)) {
      ps.setInt(1, limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new HangingBranch(rs.getString(1), rs.getString(2), rs.getString(3),
              rs.getTimestamp(4).toInstant(), rs.getInt(5), rs.getTimestamp(6).toInstant()));
        }
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot list the hanging TCC branches refused", null, e);
    }
    return out;
  }

  /** How many branches had a hanging Try refused (their rows not yet purged). */
  public long countHangingRefused() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(COUNT);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot count the hanging TCC branches refused", null, e);
    }
  }

  /**
   * A branch whose Try ran here and that is neither confirmed nor cancelled yet.
   *
   * @param triedAt when its Try ran
   */
  public record UnfinishedBranch(String tenant, String globalId, String branchId, Instant triedAt) {
  }

  /**
   * The branches whose Try ran more than {@code olderThan} ago and that are neither confirmed nor cancelled here
   * (the purge keeps them), the oldest first.
   *
   * @param limit 1..10000
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public List<UnfinishedBranch> unfinished(Duration olderThan, int limit) {
    Require.notNegative("tcc.ops.olderThan", olderThan);
    Require.between("tcc.ops.limit", limit, 1, 10_000);
    List<UnfinishedBranch> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(UNFINISHED)) {
      ps.setDouble(1, olderThan.toSeconds());
      ps.setInt(2, limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new UnfinishedBranch(rs.getString(1), rs.getString(2), rs.getString(3),
              rs.getTimestamp(4).toInstant()));
        }
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot list the unfinished TCC branches", null, e);
    }
    return out;
  }

  /** How many branches {@link #unfinished} would list without a limit. */
  public long countUnfinished(Duration olderThan) {
    Require.notNegative("tcc.ops.olderThan", olderThan);
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(COUNT_UNFINISHED)) {
      ps.setDouble(1, olderThan.toSeconds());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot count the unfinished TCC branches", null, e);
    }
  }
}
