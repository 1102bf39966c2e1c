package io.converge.outbox.internal;

import io.converge.producer.support.Backoff;
import io.converge.outbox.OutboxRelayBuilder.Settings;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.SendAllResult;
import io.converge.producer.BrokerUnavailableException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One claim-send-mark transaction. Per-key order with many relays rests on one rule: only the head of a
 * key (its oldest unpublished row) can be claimed, with {@code FOR UPDATE SKIP LOCKED}; the claimer then
 * also sends that key's later rows in the same transaction. Another relay sees the head unpublished
 * until this transaction commits, so it can claim neither the head (locked) nor a later row (not a
 * head). Rows are marked published with a conditional update, so a row that another path (the CDC
 * stream or its sweeper) published meanwhile is not sent again by this one.
 *
 * <p>Shared by the polling relay ({@link #run}: due heads of any key) and the CDC relay (its sweeper:
 * {@link #run} with a minimum age; its stream: {@link #runKeys} for the keys of a WAL batch). Used by
 * one thread at a time.
 */
public final class RelayCycle {

  private static final Logger LOG = LoggerFactory.getLogger(RelayCycle.class);

  static final String CLAIM_HEADS = """
      SELECT o.seq, o.order_key FROM converge_outbox o
      WHERE o.published_at IS NULL AND o.parked_at IS NULL
        AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= now())
        AND o.created_at <= now() - make_interval(secs => ?)
        AND NOT EXISTS (SELECT 1 FROM converge_outbox p
                        WHERE p.order_key = o.order_key AND p.seq < o.seq AND p.published_at IS NULL)
      ORDER BY o.seq
      LIMIT ?
      FOR UPDATE OF o SKIP LOCKED
      """;
  /** The heads of the given keys, due or not; waits for another path's claim of a head (never skips it). */
  static final String KEY_HEADS = """
      SELECT o.seq, o.order_key FROM converge_outbox o
      WHERE o.order_key = ANY (?) AND o.published_at IS NULL AND o.parked_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM converge_outbox p
                        WHERE p.order_key = o.order_key AND p.seq < o.seq AND p.published_at IS NULL)
      ORDER BY o.seq
      FOR UPDATE OF o
      """;
  static final String ROWS_OF_KEYS = """
      SELECT seq, message_id, topic, order_key, msg_key, tag, header_names, header_values, payload, attempts
      FROM converge_outbox
      WHERE order_key = ANY (?) AND published_at IS NULL AND parked_at IS NULL
      ORDER BY seq
      LIMIT ?
      """;
  static final String MARK_PUBLISHED =
      "UPDATE converge_outbox SET published_at = now() WHERE seq = ANY (?) AND published_at IS NULL";
  static final String REFUSED = """
      UPDATE converge_outbox
      SET attempts = attempts + 1, last_error = ?, next_attempt_at = now() + make_interval(secs => ?),
          parked_at = CASE WHEN attempts + 1 >= ? THEN now() END
      WHERE seq = ?
      """;
  static final String UNAVAILABLE = """
      UPDATE converge_outbox SET last_error = ?, next_attempt_at = now() + make_interval(secs => ?) WHERE seq = ?
      """;

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

  private final Settings settings;
  private final Backoff retry;
  private final double minAgeSeconds;

  /**
   * A cycle with {@code settings} (batch size, sink, attempts, metrics); refused rows wait {@code retry};
   * {@link #run} claims only rows at least {@code minAge} old (zero: every row).
   */
  public RelayCycle(Settings settings, Backoff retry, Duration minAge) {
    this.settings = settings;
    this.retry = retry;
    this.minAgeSeconds = minAge.toMillis() / 1000.0;
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
    Set<String> keys = new HashSet<>();
    try (PreparedStatement ps = c.prepareStatement(onlyKeys == null ? CLAIM_HEADS : KEY_HEADS)) {
      if (onlyKeys == null) {
        ps.setDouble(1, minAgeSeconds);
        ps.setInt(2, settings.batchSize());
      } else {
        ps.setArray(1, c.createArrayOf("text", onlyKeys.toArray()));
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          keys.add(rs.getString(2));
        }
      }
    }
    if (keys.isEmpty()) {
      return Result.NONE;
    }
    int limit = Math.max(settings.batchSize(), keys.size()) * 2;
    List<OutboxRecord> rows = rows(c, keys, limit);
    SendAllResult result = settings.sink().sendAll(rows);
    List<Long> sent = new ArrayList<>(result.sent().size());
    for (OutboxRecord r : result.sent()) {
      sent.add(r.seq());
    }
    int refused = 0;
    int parked = 0;
    int postponed = 0;
    boolean unavailable = false;
    for (SendAllResult.Failure f : result.failed()) {
      OutboxRecord row = f.record();
      Exception e = f.error();
      if (e instanceof BrokerUnavailableException) {
        unavailable = true;
        postponed++;
        LOG.debug("Broker unavailable for outbox row {}: {}", row, e.toString());
        postpone(c, row, e);
        continue;
      }
      refused++;
      if (refuse(c, row, e)) {
        parked++;
        settings.metrics().parked(row.orderKey());
        LOG.warn("Outbox message {} (key {}, topic {}) parked after {} refused attempts: {}", row.messageId(),
            row.orderKey(), row.topic(), row.attempts() + 1, e.toString());
      } else {
        LOG.warn("Outbox message {} (key {}) refused by {} (attempt {}): {}", row.messageId(), row.orderKey(),
            settings.sink().name(), row.attempts() + 1, e.toString());
      }
    }
    if (!sent.isEmpty()) {
      try (PreparedStatement ps = c.prepareStatement(MARK_PUBLISHED)) {
        ps.setArray(1, c.createArrayOf("bigint", sent.toArray()));
        ps.executeUpdate();
      }
    }
    return new Result(sent.size(), refused, parked, unavailable && sent.isEmpty(), postponed, rows.size() == limit);
  }

  private List<OutboxRecord> rows(Connection c, Set<String> keys, int limit) throws SQLException {
    List<OutboxRecord> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(ROWS_OF_KEYS)) {
      ps.setArray(1, c.createArrayOf("text", keys.toArray()));
      ps.setInt(2, limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Map<String, String> headers = new LinkedHashMap<>();
          Object[] names = (Object[]) array(rs.getArray(7));
          Object[] values = (Object[]) array(rs.getArray(8));
          for (int i = 0; i < names.length; i++) {
            headers.put((String) names[i], (String) values[i]);
          }
          rows.add(new OutboxRecord(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(5), rs.getString(6),
              headers, rs.getBytes(9), rs.getInt(10)));
        }
      }
    }
    return rows;
  }

  private static Object array(Array a) throws SQLException {
    try {
      return a.getArray();
    } finally {
      a.free();
    }
  }

  /** Counts a refusal; returns whether the row (and so its key) is now parked. */
  private boolean refuse(Connection c, OutboxRecord row, Exception e) throws SQLException {
    int attempts = row.attempts() + 1;
    try (PreparedStatement ps = c.prepareStatement(REFUSED)) {
      ps.setString(1, abbreviate(e.toString()));
      ps.setDouble(2, retry.delay(attempts).toMillis() / 1000.0);
      ps.setInt(3, settings.maxAttempts());
      ps.setLong(4, row.seq());
      ps.executeUpdate();
    }
    return attempts >= settings.maxAttempts();
  }

  private void postpone(Connection c, OutboxRecord row, Exception e) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(UNAVAILABLE)) {
      ps.setString(1, abbreviate(e.toString()));
      ps.setDouble(2, settings.brokerBackoffBase().toMillis() / 1000.0);
      ps.setLong(3, row.seq());
      ps.executeUpdate();
    }
  }

  private static String abbreviate(String s) {
    return s.length() <= 1000 ? s : s.substring(0, 1000);
  }
}
