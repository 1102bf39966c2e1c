package io.converge.pulsar;

import io.converge.core.internal.OpsRows;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;

/**
 * The operator's view of the Pulsar backend's transaction log ({@code converge_pulsar_txn}): the
 * transactions recovery parked because Pulsar refused their re-publish the maximum attempts, and
 * resuming one once the cause is fixed (topic re-created, permission granted). Stateless; thread-safe.
 */
public final class PulsarTxns {

  private static final String PARKED = """
      SELECT t.txn_most, t.txn_least, t.producer_group, t.attempts, t.reason, t.parked_at, t.created_at,
             (SELECT count(*) FROM converge_pulsar_txn_message m WHERE m.txn_most = t.txn_most AND m.txn_least = t.txn_least)
      FROM converge_pulsar_txn t WHERE t.parked_at IS NOT NULL ORDER BY t.parked_at LIMIT ?
      """;
  private static final String PARKED_COUNT = "SELECT count(*) FROM converge_pulsar_txn WHERE parked_at IS NOT NULL";
  private static final String RESUME = """
      UPDATE converge_pulsar_txn SET parked_at = NULL, attempts = 0, next_attempt_at = NULL, reason = NULL
      WHERE txn_most = ? AND txn_least = ? AND parked_at IS NOT NULL
      """;

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
    return rows.updateOne("Could not resume Pulsar transaction (" + most + "," + least + ")", null, RESUME, ps -> {
      ps.setLong(1, most);
      ps.setLong(2, least);
    });
  }
}
