package io.converge.consumer.internal;

import io.converge.consumer.IncomingMessage;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;

/** The SQL of the consumer tables. Stateless; every method runs on the caller's connection. */
final class ConsumerStore {

  // Waits on the primary key while another transaction holds an uncommitted claim of the same id,
  // then inserts nothing if that transaction committed: the concurrent duplicate sees the winner.
  private static final String CLAIM = """
      INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, detail, topic, processed_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (tenant, consumer_group, message_id) DO NOTHING
      """;

  /**
   * The hot path in one round trip: the claim and the removal of attempt rows earlier failures left
   * (only when the claim succeeded; any failure of the handler rolls the removal back with the claim,
   * and the failure's outcome is recorded in a transaction of its own).
   */
  private static final String CLAIM_FOR_HANDLER = """
      WITH claimed AS (
        INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, detail, topic, processed_at)
        VALUES (?, ?, ?, 'PROCESSED', NULL, ?, ?)
        ON CONFLICT (tenant, consumer_group, message_id) DO NOTHING
        RETURNING 1),
      cleared AS (
        DELETE FROM converge_consumer_attempt
         WHERE tenant = ? AND consumer_group = ? AND message_id = ? AND EXISTS (SELECT 1 FROM claimed))
      SELECT count(*) FROM claimed
      """;

  private static final String SET_OUTCOME = """
      UPDATE converge_dedup SET outcome = ?, detail = ? WHERE tenant = ? AND consumer_group = ? AND message_id = ?
      """;

  private static final String RECORD_ATTEMPT = """
      INSERT INTO converge_consumer_attempt AS a
        (tenant, consumer_group, message_id, attempts, last_error, first_failed_at, last_failed_at)
      VALUES (?, ?, ?, 1, ?, ?, ?)
      ON CONFLICT (tenant, consumer_group, message_id)
      DO UPDATE SET attempts = a.attempts + 1, last_error = EXCLUDED.last_error, last_failed_at = EXCLUDED.last_failed_at
      RETURNING attempts
      """;

  private static final String ATTEMPTS = """
      SELECT attempts FROM converge_consumer_attempt WHERE tenant = ? AND consumer_group = ? AND message_id = ?
      """;

  private static final String CLEAR_ATTEMPTS = """
      DELETE FROM converge_consumer_attempt WHERE tenant = ? AND consumer_group = ? AND message_id = ?
      """;

  private static final String INSERT_DLQ = """
      INSERT INTO converge_dlq (tenant, consumer_group, topic, message_id, broker_message_id, reason_code, reason,
                                attempts, headers, payload, status, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'PARKED', ?)
      """;

  private static final String INSERT_TICKET = """
      INSERT INTO converge_ticket (tenant, consumer_group, topic, message_id, dlq_id, kind, reason, status, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, 'OPEN', ?)
      """;

  private static final String LOCK_PARKED = """
      SELECT topic, message_id, broker_message_id, headers, payload, attempts
        FROM converge_dlq WHERE id = ? AND consumer_group = ? AND status = 'PARKED'
         FOR UPDATE
      """;

  private static final String RELEASE_PARKED_CLAIM = """
      DELETE FROM converge_dedup
       WHERE tenant = ? AND consumer_group = ? AND message_id = ? AND outcome IN ('DEAD_LETTERED', 'TICKETED')
      """;

  private static final String MARK_RESUMED = """
      UPDATE converge_dlq SET status = 'RESUMED', resolved_at = ? WHERE id = ? AND status = 'PARKED'
      """;

  private ConsumerStore() {
  }

  /** True when this transaction now owns the id; false when it was already claimed (a duplicate). */
  static boolean claim(Connection c, String tenant, String group, String messageId, String outcome, String detail,
      String topic, Instant now) throws SQLException {
    return update(c, CLAIM, tenant, group, messageId, outcome, detail, topic, now) == 1;
  }

  /**
   * Claims the id for a first run of the handler and clears earlier attempt rows, in one round trip.
   * True when this transaction now owns the id; false for a duplicate.
   */
  static boolean claimForHandler(Connection c, String tenant, String group, String messageId, String topic, Instant now)
      throws SQLException {
    return queryInt(c, CLAIM_FOR_HANDLER, 0, tenant, group, messageId, topic, now, tenant, group, messageId) == 1;
  }

  /** Sets the outcome of a claim this transaction holds. */
  static void setOutcome(Connection c, String tenant, String group, String messageId, String outcome, String detail)
      throws SQLException {
    update(c, SET_OUTCOME, outcome, detail, tenant, group, messageId);
  }

  static int recordAttempt(Connection c, String tenant, String group, String messageId, String error, Instant now)
      throws SQLException {
    return queryInt(c, RECORD_ATTEMPT, 0, tenant, group, messageId, error, now, now);
  }

  static int attempts(Connection c, String tenant, String group, String messageId) throws SQLException {
    return queryInt(c, ATTEMPTS, 0, tenant, group, messageId);
  }

  static void clearAttempts(Connection c, String tenant, String group, String messageId) throws SQLException {
    update(c, CLEAR_ATTEMPTS, tenant, group, messageId);
  }

  static long insertDlq(Connection c, String group, IncomingMessage m, String messageId, String reasonCode,
      String reason, int attempts, Instant now) throws SQLException {
    return insert(c, INSERT_DLQ, m.tenant(), group, m.topic(), messageId, m.brokerMessageId(), reasonCode, reason,
        attempts,
        HeaderCodec.encode(m.headers()), m.payload(), now);
  }

  static long insertTicket(Connection c, String group, IncomingMessage m, String messageId, long dlqId, String kind,
      String reason, Instant now) throws SQLException {
    return insert(c, INSERT_TICKET, m.tenant(), group, m.topic(), messageId, dlqId, kind, reason, now);
  }

  /** Locks a parked row of {@code group} and rebuilds its message, or returns null. */
  static IncomingMessage lockParked(Connection c, long dlqId, String group) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LOCK_PARKED)) {
      ps.setLong(1, dlqId);
      ps.setString(2, group);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        return IncomingMessage.builder().topic(rs.getString("topic"))
            .headers(HeaderCodec.decode(rs.getString("headers")))
            .payload(rs.getBytes("payload")).brokerMessageId(rs.getString("broker_message_id"))
            .deliveryCount(Math.max(1, rs.getInt("attempts") + 1)).build();
      }
    }
  }

  static void releaseParkedClaim(Connection c, String tenant, String group, String messageId) throws SQLException {
    update(c, RELEASE_PARKED_CLAIM, tenant, group, messageId);
  }

  static void markResumed(Connection c, long dlqId, Instant now) throws SQLException {
    update(c, MARK_RESUMED, now, dlqId);
  }

  private static int update(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, args);
      return ps.executeUpdate();
    }
  }

  /** The first column of the first row, or {@code none} without a row. */
  private static int queryInt(Connection c, String sql, int none, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, args);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getInt(1) : none;
      }
    }
  }

  /** Inserts one row and returns its generated {@code id}. */
  private static long insert(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
      bind(ps, args);
      ps.executeUpdate();
      try (ResultSet rs = ps.getGeneratedKeys()) {
        rs.next();
        return rs.getLong("id");
      }
    }
  }

  /** Binds by type: an {@link Instant} as a timestamp, bytes as bytea, a null or a text as text. */
  private static void bind(PreparedStatement ps, Object... args) throws SQLException {
    for (int i = 0; i < args.length; i++) {
      Object arg = args[i];
      if (arg instanceof Instant t) {
        ps.setTimestamp(i + 1, Timestamp.from(t));
      } else if (arg instanceof byte[] b) {
        ps.setBytes(i + 1, b);
      } else if (arg instanceof Integer n) {
        ps.setInt(i + 1, n);
      } else if (arg instanceof Long n) {
        ps.setLong(i + 1, n);
      } else {
        ps.setString(i + 1, (String) arg);
      }
    }
  }
}
