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

  private ConsumerStore() {}

  /** True when this transaction now owns the id; false when it was already claimed (a duplicate). */
  static boolean claim(Connection c, String tenant, String group, String messageId, String outcome, String detail,
      String topic, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CLAIM)) {
      ps.setString(1, tenant);
      ps.setString(2, group);
      ps.setString(3, messageId);
      ps.setString(4, outcome);
      ps.setString(5, detail);
      ps.setString(6, topic);
      ps.setTimestamp(7, Timestamp.from(now));
      return ps.executeUpdate() == 1;
    }
  }

  /**
   * Claims the id for a first run of the handler and clears earlier attempt rows, in one round trip.
   * True when this transaction now owns the id; false for a duplicate.
   */
  static boolean claimForHandler(Connection c, String tenant, String group, String messageId, String topic, Instant now)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CLAIM_FOR_HANDLER)) {
      ps.setString(1, tenant);
      ps.setString(2, group);
      ps.setString(3, messageId);
      ps.setString(4, topic);
      ps.setTimestamp(5, Timestamp.from(now));
      ps.setString(6, tenant);
      ps.setString(7, group);
      ps.setString(8, messageId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1) == 1;
      }
    }
  }

  /** Sets the outcome of a claim this transaction holds. */
  static void setOutcome(Connection c, String tenant, String group, String messageId, String outcome, String detail)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SET_OUTCOME)) {
      ps.setString(1, outcome);
      ps.setString(2, detail);
      ps.setString(3, tenant);
      ps.setString(4, group);
      ps.setString(5, messageId);
      ps.executeUpdate();
    }
  }

  static int recordAttempt(Connection c, String tenant, String group, String messageId, String error, Instant now)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RECORD_ATTEMPT)) {
      ps.setString(1, tenant);
      ps.setString(2, group);
      ps.setString(3, messageId);
      ps.setString(4, error);
      ps.setTimestamp(5, Timestamp.from(now));
      ps.setTimestamp(6, Timestamp.from(now));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  static int attempts(Connection c, String tenant, String group, String messageId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ATTEMPTS)) {
      ps.setString(1, tenant);
      ps.setString(2, group);
      ps.setString(3, messageId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getInt(1) : 0;
      }
    }
  }

  static void clearAttempts(Connection c, String tenant, String group, String messageId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CLEAR_ATTEMPTS)) {
      ps.setString(1, tenant);
      ps.setString(2, group);
      ps.setString(3, messageId);
      ps.executeUpdate();
    }
  }

  static long insertDlq(Connection c, String group, IncomingMessage m, String messageId, String reasonCode,
      String reason, int attempts, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT_DLQ, Statement.RETURN_GENERATED_KEYS)) {
      ps.setString(1, m.tenant());
      ps.setString(2, group);
      ps.setString(3, m.topic());
      ps.setString(4, messageId);
      ps.setString(5, m.brokerMessageId());
      ps.setString(6, reasonCode);
      ps.setString(7, reason);
      ps.setInt(8, attempts);
      ps.setString(9, HeaderCodec.encode(m.headers()));
      ps.setBytes(10, m.payload());
      ps.setTimestamp(11, Timestamp.from(now));
      ps.executeUpdate();
      try (ResultSet rs = ps.getGeneratedKeys()) {
        rs.next();
        return rs.getLong("id");
      }
    }
  }

  static long insertTicket(Connection c, String group, IncomingMessage m, String messageId, long dlqId, String kind,
      String reason, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT_TICKET, Statement.RETURN_GENERATED_KEYS)) {
      ps.setString(1, m.tenant());
      ps.setString(2, group);
      ps.setString(3, m.topic());
      ps.setString(4, messageId);
      ps.setLong(5, dlqId);
      ps.setString(6, kind);
      ps.setString(7, reason);
      ps.setTimestamp(8, Timestamp.from(now));
      ps.executeUpdate();
      try (ResultSet rs = ps.getGeneratedKeys()) {
        rs.next();
        return rs.getLong("id");
      }
    }
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
        return IncomingMessage.builder().topic(rs.getString("topic")).headers(HeaderCodec.decode(rs.getString("headers")))
            .payload(rs.getBytes("payload")).brokerMessageId(rs.getString("broker_message_id"))
            .deliveryCount(Math.max(1, rs.getInt("attempts") + 1)).build();
      }
    }
  }

  static void releaseParkedClaim(Connection c, String tenant, String group, String messageId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RELEASE_PARKED_CLAIM)) {
      ps.setString(1, tenant);
      ps.setString(2, group);
      ps.setString(3, messageId);
      ps.executeUpdate();
    }
  }

  static void markResumed(Connection c, long dlqId, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(MARK_RESUMED)) {
      ps.setTimestamp(1, Timestamp.from(now));
      ps.setLong(2, dlqId);
      ps.executeUpdate();
    }
  }
}
