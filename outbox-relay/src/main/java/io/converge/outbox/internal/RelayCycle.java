package io.converge.outbox.internal;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.SendAllResult;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * One claim-send-mark transaction. Per-key order with many relays rests on one rule: only the head of a
 * key's line (its oldest unpublished row of one tenant on one topic) can be claimed, with
 * {@code FOR UPDATE SKIP LOCKED}; the claimer then also sends that line's later rows in the same transaction. Another relay sees the head unpublished
 * until this transaction commits, so it can claim neither the head (locked) nor a later row (not a
 * head). Rows are marked published with a conditional update, so a row that another path (the CDC
 * stream or its sweeper) published meanwhile is not sent again by this one. The rows are read and
 * written by {@link OutboxRows}; what a send's outcome does to them is the {@link DeliveryPolicy}'s.
 *
 * <p>Shared by the polling relay ({@link #run}: due heads of any key) and the CDC relay (its sweeper:
 * {@link #run} with a minimum age; its stream: {@link #runKeys} for the keys of a WAL batch). Used by
 * one thread at a time.
 *
 * <p>{@link #run} claims only rows at least {@code minAge} old (zero: every row).
 *
 * @param sink where the claimed keys' rows are sent
 * @param batchSize the most heads one cycle claims
 * @param policy what a send's outcome does to the rows
 * @param minAge the youngest row {@link #run} claims; zero for every row
 */
public record RelayCycle(OutboxSink sink, int batchSize, DeliveryPolicy policy, Duration minAge) {

  /**
   * What one cycle did.
   *
   * @param published rows sent and marked published
   * @param refused rows the broker refused (each counted as an attempt)
   * @param parked of those, rows parked now (their key waits for a resume)
   * @param brokerUnavailable the broker was unavailable and nothing was sent
   * @param postponed rows not sent because the broker was unavailable (no attempt counted)
   * @param more the claimed keys had more rows than one cycle reads: run again
   */
  public record Result(int published, int refused, int parked, boolean brokerUnavailable, int postponed, boolean more) {

    static final Result NONE = new Result(0, 0, 0, false, 0, false);
  }

  /** Claims up to batch-size due heads (skipping locked ones), sends their keys' rows, marks them; one transaction. */
  public Result run(Connection c) throws SQLException {
    return inTransaction(c, null);
  }

  /**
   * Sends the unpublished rows of {@code keys} whose head is not parked, due or not, in seq order, and
   * marks them; waits for a head another transaction holds. One transaction.
   */
  public Result runKeys(Connection c, Collection<String> keys) throws SQLException {
    return keys.isEmpty() ? Result.NONE : inTransaction(c, keys);
  }

  private Result inTransaction(Connection c, Collection<String> onlyKeys) throws SQLException {
    c.setAutoCommit(false);
    try {
      Result r = claimSendMark(c, onlyKeys);
      c.commit();
      return r;
    } catch (SQLException | RuntimeException e) {
      try {
        c.rollback();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private Result claimSendMark(Connection c, Collection<String> onlyKeys) throws SQLException {
    OutboxRows rows = policy.rows();
    Set<Long> heads = onlyKeys == null ? rows.claimDueHeads(c, minAge, batchSize) : rows.claimHeadsOf(c, onlyKeys);
    if (heads.isEmpty()) {
      return Result.NONE;
    }
    int limit = Math.max(batchSize, heads.size()) * 2;
    List<OutboxRecord> batch = rows.rowsOf(c, heads, limit);
    SendAllResult sent = sink.sendAll(batch);
    DeliveryPolicy.Settled s = policy.settle(c, sent, sink.name());
    return new Result(s.published(), s.refused(), s.parked(), s.postponed() > 0 && s.published() == 0, s.postponed(),
        batch.size() == limit);
  }
}
