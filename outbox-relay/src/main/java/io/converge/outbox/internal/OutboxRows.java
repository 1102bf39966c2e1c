package io.converge.outbox.internal;

import io.converge.outbox.spi.OutboxRecord;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The one row store of the outbox's delivery, used by the polling relay, the CDC relay and
 * {@code Outbox.resume}: claim the heads of keys, read their rows, mark rows published, count a refusal
 * (parking the row, and so its key, at the last attempt), postpone a row during an outage (no attempt
 * counted), resume a parked key. Every state change is a conditional update. The caller owns the
 * connection and its transaction. Stateless; thread-safe.
 */
public final class OutboxRows {

  /** Due heads of any key (the oldest unpublished row of its key), at least a given age old; skips locked heads. */
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
  static final String MARK_PUBLISHED = "UPDATE converge_outbox SET published_at = now() WHERE seq = ANY (?) AND published_at IS NULL";
  static final String REFUSED = """
      UPDATE converge_outbox
      SET attempts = attempts + 1, last_error = ?, next_attempt_at = now() + make_interval(secs => ?),
          parked_at = CASE WHEN attempts + 1 >= ? THEN now() END
      WHERE seq = ?
      """;
  static final String POSTPONED = """
      UPDATE converge_outbox SET last_error = ?, next_attempt_at = now() + make_interval(secs => ?) WHERE seq = ?
      """;
  static final String RESUME = """
      UPDATE converge_outbox SET parked_at = NULL, attempts = 0, next_attempt_at = NULL
      WHERE order_key = ? AND published_at IS NULL AND parked_at IS NOT NULL
      """;
  /** Reasons are kept to this many characters. */
  static final int REASON_LENGTH = 1000;

  /**
   * Claims (locks until the transaction ends) up to {@code limit} due heads at least {@code minAge} old,
   * skipping heads another transaction holds; returns their keys.
   */
  public Set<String> claimDueHeads(Connection c, Duration minAge, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CLAIM_HEADS)) {
      ps.setDouble(1, seconds(minAge));
      ps.setInt(2, limit);
      return keys(ps);
    }
  }

  /** Claims the unparked heads of {@code keys}, due or not, waiting for a head another transaction holds; returns their keys. */
  public Set<String> claimHeadsOf(Connection c, Collection<String> keys) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(KEY_HEADS)) {
      ps.setArray(1, c.createArrayOf("text", keys.toArray()));
      return keys(ps);
    }
  }

  private static Set<String> keys(PreparedStatement ps) throws SQLException {
    Set<String> keys = new LinkedHashSet<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        keys.add(rs.getString(2));
      }
    }
    return keys;
  }

  /** The unpublished, unparked rows of {@code keys} in seq order, at most {@code limit}. */
  public List<OutboxRecord> rowsOf(Connection c, Collection<String> keys, int limit) throws SQLException {
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

  /** Marks the rows {@code seqs} published, unless another path marked them already. */
  public void markPublished(Connection c, Collection<Long> seqs) throws SQLException {
    if (seqs.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = c.prepareStatement(MARK_PUBLISHED)) {
      ps.setArray(1, c.createArrayOf("bigint", seqs.toArray()));
      ps.executeUpdate();
    }
  }

  /**
   * Counts a refusal of {@code row} with its {@code reason}: due again after {@code retryIn}, parked when
   * this was attempt {@code maxAttempts} or later.
   */
  public void refuse(Connection c, OutboxRecord row, String reason, Duration retryIn, int maxAttempts)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(REFUSED)) {
      ps.setString(1, abbreviate(reason));
      ps.setDouble(2, seconds(retryIn));
      ps.setInt(3, maxAttempts);
      ps.setLong(4, row.seq());
      ps.executeUpdate();
    }
  }

  /** The broker was unavailable for {@code row}: due again after {@code retryIn}, no attempt counted. */
  public void postpone(Connection c, OutboxRecord row, String reason, Duration retryIn) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(POSTPONED)) {
      ps.setString(1, abbreviate(reason));
      ps.setDouble(2, seconds(retryIn));
      ps.setLong(3, row.seq());
      ps.executeUpdate();
    }
  }

  /** Resumes the parked key {@code key} with a fresh attempt count; returns the rows resumed (0: not parked). */
  public int resume(Connection c, String key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RESUME)) {
      ps.setString(1, key);
      return ps.executeUpdate();
    }
  }

  private static double seconds(Duration d) {
    return d.toMillis() / 1000.0;
  }

  private static String abbreviate(String s) {
    return s.length() <= REASON_LENGTH ? s : s.substring(0, REASON_LENGTH);
  }
}
