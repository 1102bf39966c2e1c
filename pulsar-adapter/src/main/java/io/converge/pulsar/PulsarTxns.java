package io.converge.pulsar;

import io.converge.core.internal.OpsRows;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;

/**
 * The operator's view of the Pulsar backend's log ({@code converge_pulsar_unit}, and {@code converge_pulsar_txn}
 * for what a version before pulsar migration V4 logged): the transactions recovery parked because Pulsar refused
 * their re-publish the maximum attempts, and resuming one once the cause is fixed (topic re-created, permission
 * granted). Stateless; thread-safe.
 */
public final class PulsarTxns {

  /** From the view over both tables (pulsar migration V4): what this version logged and what an earlier one did. */
  private static final String PARKED = """
      SELECT txn_most, txn_least, producer_group, attempts, reason, parked_at, created_at, cardinality(message_ids)
      FROM converge_pulsar_logged WHERE parked_at IS NOT NULL ORDER BY parked_at LIMIT ?
      """;
  private static final String PARKED_COUNT = "SELECT count(*) FROM converge_pulsar_logged WHERE parked_at IS NOT NULL";
  /** In the table that holds the transaction: {@code converge_pulsar_unit}, or {@code converge_pulsar_txn} (before V4). */
  private static final String RESUME = """
      UPDATE %s SET parked_at = NULL, attempts = 0, next_attempt_at = NULL, reason = NULL
      WHERE txn_most = ? AND txn_least = ? AND parked_at IS NOT NULL
      """;
  private static final List<String> RESUMES = List.of(RESUME.formatted("converge_pulsar_unit"),
      RESUME.formatted("converge_pulsar_txn"));

  /**
   * A parked Pulsar transaction.
   *
   * @param most the transaction id's most significant bits
   * @param least its least significant bits
   * @param group the producer group
   * @param attempts recovery attempts made
   * @param reason the last error (names the message and topic Pulsar refused)
   * @param parkedAt when it was parked
   * @param createdAt when its unit of work committed
   * @param messages how many messages it holds
   */
  public record Parked(long most, long least, String group, int attempts, String reason, Instant parkedAt,
      Instant createdAt, long messages) {

    /** The transaction id as Pulsar prints it, {@code (most,least)}. */
    public String id() {
      return "(" + most + "," + least + ")";
    }
  }

  private final OpsRows rows;

  private PulsarTxns(DataSource dataSource) {
    this.rows = OpsRows.on(dataSource);
  }

  /** The Pulsar transaction log on {@code dataSource} (which has the {@code pulsar} migrations). */
  public static PulsarTxns on(DataSource dataSource) {
    return new PulsarTxns(dataSource);
  }

  /** The parked transactions of every group, longest parked first, at most {@code limit}. */
  public List<Parked> parked(int limit) {
    return rows.list("the parked Pulsar transactions", PARKED, limit, Integer.MAX_VALUE, rs -> new Parked(rs.getLong(1),
        rs.getLong(2), rs.getString(3), rs.getInt(4), rs.getString(5), rs.getTimestamp(6).toInstant(),
        rs.getTimestamp(7).toInstant(), rs.getLong(8)));
  }

  /** How many transactions are parked, all groups. */
  public long parkedCount() {
    return rows.count("the parked Pulsar transactions", PARKED_COUNT);
  }

  /**
   * Makes a parked transaction due again with fresh attempts: the next recovery scan of its group
   * re-publishes it. Returns false when it is not parked (unknown, resolved, or already resumed).
   */
  public boolean resume(long most, long least) {
    for (String resume : RESUMES) {
      if (rows.updateOne("Could not resume Pulsar transaction (" + most + "," + least + ")", null, resume, ps -> {
        ps.setLong(1, most);
        ps.setLong(2, least);
      })) {
        return true;
      }
    }
    return false;
  }
}
