package io.converge.outbox.internal;

import io.converge.core.internal.RowLifecycle;
import io.converge.outbox.AmbiguousKeyException;
import io.converge.outbox.OutboxLines;
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
 * counted), resume a parked line. A key's line is its rows of one tenant on one topic
 * ({@link #EARLIER_IN_LINE}). The due claim, the refusal, the postponement and the publication are the moves of
 * {@link RowLifecycle} ({@link #LIFECYCLE}); the claim of named keys, the rows of a line and the resumption of a
 * line are the line's own statements. The caller owns the connection and its transaction. Stateless; thread-safe.
 */
public final class OutboxRows {

  /**
   * A key's line: its rows of one tenant on one topic ({@link OutboxLines}). Only the head of a line (its oldest
   * unpublished row) is claimed, and a parked head holds its own line only. The console's queries apply the same rule.
   */
  static final String EARLIER_IN_LINE = OutboxLines.EARLIER_UNPUBLISHED;
  /**
   * The outbox's row lifecycle, claimed: due heads of any line (unpublished, unparked, due, at least a given age old,
   * no earlier unpublished row in their line), oldest seq first, skipping heads another transaction holds; a refusal
   * counts an attempt and parks at the last, an outage postpones without counting; sent rows are completed
   * (published) once. The claimed head's lock holds its line, so the moves on the line's rows name them by seq.
   */
  static final RowLifecycle LIFECYCLE = RowLifecycle.builder("converge_outbox").key("seq").attempts("attempts")
      .dueAt("next_attempt_at").reason("last_error").parkedAt("parked_at")
      .openUntil("published_at IS NULL", "published_at = now()")
      .claimAlias("o").claimOrder("seq")
      .claimWhere("o.created_at <= now() - make_interval(secs => ?) AND NOT EXISTS (" + EARLIER_IN_LINE + ")")
      .build();
  /** The heads of the lines of the given keys, due or not; waits for another path's claim of a head (never skips it). */
  static final String KEY_HEADS = """
      SELECT o.seq FROM converge_outbox o
      WHERE o.order_key = ANY (?) AND o.published_at IS NULL AND o.parked_at IS NULL
        AND NOT EXISTS (%s)
      ORDER BY o.seq
      FOR UPDATE OF o
      """.formatted(EARLIER_IN_LINE);
  /** The unpublished rows of the lines of the given heads, from the head on. */
  static final String ROWS_OF_LINES = """
      SELECT r.seq, r.message_id, r.topic, r.order_key, r.msg_key, r.tag, r.header_names, r.header_values, r.payload,
             r.attempts
      FROM converge_outbox h
      JOIN converge_outbox r ON %s
                            AND r.seq >= h.seq AND r.published_at IS NULL AND r.parked_at IS NULL
      WHERE h.seq = ANY (?)
      ORDER BY r.seq
      LIMIT ?
      """.formatted(OutboxLines.sameLine("r", "h"));
  /** The lines of a key with a parked row, optionally of one tenant and/or topic (null: any). */
  static final String PARKED_LINES = """
      SELECT DISTINCT tenant, topic FROM converge_outbox
      WHERE order_key = ? AND published_at IS NULL AND parked_at IS NOT NULL
        AND (?::text IS NULL OR tenant = ?) AND (?::text IS NULL OR topic = ?)
      ORDER BY tenant, topic
      LIMIT 20
      """;
  static final String RESUME = """
      UPDATE converge_outbox SET parked_at = NULL, attempts = 0, next_attempt_at = NULL
      WHERE order_key = ? AND tenant = ? AND topic = ? AND published_at IS NULL AND parked_at IS NOT NULL
      """;
  /** The line of one parked row, by its message id. */
  static final String RESUME_LINE_OF = """
      UPDATE converge_outbox o SET parked_at = NULL, attempts = 0, next_attempt_at = NULL
      FROM converge_outbox h
      WHERE h.message_id = ? AND h.published_at IS NULL AND h.parked_at IS NOT NULL
        AND o.order_key = h.order_key AND o.tenant = h.tenant AND o.topic = h.topic
        AND o.published_at IS NULL AND o.parked_at IS NOT NULL
      """;
  /** Reasons are kept to this many characters. */
  static final int REASON_LENGTH = 1000;

  /**
   * Claims (locks until the transaction ends) up to {@code limit} due line heads at least {@code minAge}
   * old, skipping heads another transaction holds; returns their seqs.
   */
  public Set<Long> claimDueHeads(Connection c, Duration minAge, int limit) throws SQLException {
    Set<Long> heads = new LinkedHashSet<>();
    for (RowLifecycle.Leased head : LIFECYCLE.claimDue(c, limit, seconds(minAge))) {
      heads.add((Long) head.key().get(0));
    }
    return heads;
  }

  /**
   * Claims the unparked heads of the lines of {@code keys} (every tenant and topic), due or not, waiting for
   * a head another transaction holds; returns their seqs.
   */
  public Set<Long> claimHeadsOf(Connection c, Collection<String> keys) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(KEY_HEADS)) {
      ps.setArray(1, c.createArrayOf("text", keys.toArray()));
      return heads(ps);
    }
  }

  private static Set<Long> heads(PreparedStatement ps) throws SQLException {
    Set<Long> heads = new LinkedHashSet<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        heads.add(rs.getLong(1));
      }
    }
    return heads;
  }

  /** The unpublished, unparked rows of the lines of the claimed {@code heads}, in seq order, at most {@code limit}. */
  public List<OutboxRecord> rowsOf(Connection c, Collection<Long> heads, int limit) throws SQLException {
    List<OutboxRecord> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(ROWS_OF_LINES)) {
      ps.setArray(1, c.createArrayOf("bigint", heads.toArray()));
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
    LIFECYCLE.completeAll(c, "bigint", seqs);
  }

  /**
   * Counts a refusal of {@code row} with its {@code reason}: due again after {@code retryIn}, parked when
   * this was attempt {@code maxAttempts} or later.
   */
  public void refuse(Connection c, OutboxRecord row, String reason, Duration retryIn, int maxAttempts)
      throws SQLException {
    LIFECYCLE.retryOrPark(c, List.of(row.seq()), abbreviate(reason), retryIn, maxAttempts);
  }

  /** The broker was unavailable for {@code row}: due again after {@code retryIn}, no attempt counted. */
  public void postpone(Connection c, OutboxRecord row, String reason, Duration retryIn) throws SQLException {
    LIFECYCLE.postpone(c, List.of(row.seq()), abbreviate(reason), retryIn);
  }

  /**
   * Resumes the parked line of {@code key} with a fresh attempt count; {@code tenant} and {@code topic} narrow
   * it (null: any). Returns the rows resumed (0: no such parked line).
   *
   * @throws AmbiguousKeyException when the key is parked on more than one line that matches, resuming none
   */
  public int resume(Connection c, String tenant, String topic, String key) throws SQLException {
    List<String[]> lines = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(PARKED_LINES)) {
      ps.setString(1, key);
      ps.setString(2, tenant);
      ps.setString(3, tenant);
      ps.setString(4, topic);
      ps.setString(5, topic);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          lines.add(new String[]{rs.getString(1), rs.getString(2)});
        }
      }
    }
    if (lines.size() > 1) {
      throw new AmbiguousKeyException(key, lines.stream().map(l -> "tenant '" + l[0] + "', topic '" + l[1] + "'")
          .toList());
    }
    if (lines.isEmpty()) {
      return 0;
    }
    try (PreparedStatement ps = c.prepareStatement(RESUME)) {
      ps.setString(1, key);
      ps.setString(2, lines.get(0)[0]);
      ps.setString(3, lines.get(0)[1]);
      return ps.executeUpdate();
    }
  }

  /** Resumes the line of the parked row {@code messageId}; returns the rows resumed (0: that row is not parked). */
  public int resumeLineOf(Connection c, String messageId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RESUME_LINE_OF)) {
      ps.setString(1, messageId);
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
