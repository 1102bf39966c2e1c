package io.converge.producer;

import io.converge.core.internal.OpsRows;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The operator's view of the producer's tickets ({@code converge_txn_ticket}): messages a RocketMQ
 * check-back could not decide (prepared longer ago than the log retention, no row: it may have
 * committed and been purged). An operator delivers or discards the message by hand, then resolves the
 * ticket. Stateless; thread-safe.
 */
public final class TxnTickets {

  private static final String OPEN = """
      SELECT message_id, producer_group, topic, kind, reason, checks, created_at, last_check_at
      FROM converge_txn_ticket WHERE status = 'OPEN' ORDER BY created_at, message_id LIMIT ?
      """;
  private static final String OPEN_COUNT = "SELECT count(*) FROM converge_txn_ticket WHERE status = 'OPEN'";
  private static final String RESOLVE = """
      UPDATE converge_txn_ticket SET status = 'RESOLVED', resolved_by = ?, resolved_at = now(), note = ?
      WHERE message_id = ? AND status = 'OPEN'
      """;

  /**
   * An open ticket.
   *
   * @param messageId the message the check-back asked about
   * @param group its producer group
   * @param topic its topic
   * @param kind why it was raised ({@code CHECK_BACK_PAST_RETENTION})
   * @param reason what the operator has to decide
   * @param checks how many check-backs asked about it
   * @param createdAt the first check-back
   * @param lastCheckAt the latest check-back
   */
  public record Ticket(String messageId, String group, String topic, String kind, String reason, int checks,
      Instant createdAt, Instant lastCheckAt) {
  }

  private final OpsRows rows;

  private TxnTickets(DataSource dataSource) {
    this.rows = OpsRows.on(dataSource);
  }

  /** The tickets on {@code dataSource} (which has the {@code producer} migrations). */
  public static TxnTickets on(DataSource dataSource) {
    return new TxnTickets(dataSource);
  }

  /** The open tickets of every group, oldest first, at most {@code limit}. */
  public List<Ticket> open(int limit) {
    return rows.list("the producer's tickets", OPEN, limit, Integer.MAX_VALUE, rs -> new Ticket(rs.getString(1),
        rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getInt(6),
        rs.getTimestamp(7).toInstant(),
        rs.getTimestamp(8).toInstant()));
  }

  /** How many tickets are open, all groups. */
  public long openCount() {
    return rows.count("the producer's tickets", OPEN_COUNT);
  }

  /**
   * Closes the open ticket of message {@code messageId}, recording who did it and, optionally
   * (nullable), what was done. Returns false when there is no open ticket for it. Later check-backs of the
   * same message (the broker asks until its check limit) only count themselves in {@code checks}.
   */
  public boolean resolve(String messageId, String by, String note) {
    Objects.requireNonNull(by, "by");
    return rows.updateOne("Could not resolve the ticket of message " + messageId, messageId, RESOLVE, ps -> {
      ps.setString(1, by);
      ps.setString(2, note);
      ps.setString(3, messageId);
    });
  }
}
