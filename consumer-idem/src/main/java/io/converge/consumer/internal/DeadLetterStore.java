package io.converge.consumer.internal;

import static io.converge.consumer.internal.Jdbc.bind;
import static io.converge.consumer.internal.Jdbc.insert;
import static io.converge.consumer.internal.Jdbc.update;

import io.converge.consumer.IncomingMessage;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The SQL of the parked rows ({@code converge_dlq}, {@code converge_ticket}): parking, holding a key, releasing the
 * held rows in order, resuming and re-driving. Stateless; every method runs on the caller's connection.
 */
final class DeadLetterStore {

  private DeadLetterStore() {
  }

  /**
   * The held rows of a group on the given topics that head their key (no earlier parked row of the key), oldest
   * first. The topics are the releasing handler's: a row of another topic of the group is another handler's.
   */
  private static final String RELEASABLE = """
      SELECT d.id FROM converge_dlq d
       WHERE d.consumer_group = ? AND d.topic = ANY (?) AND d.id > ? AND d.status = 'PARKED'
         AND d.reason_code = 'HELD'
         AND d.message_key IS NOT NULL
         AND NOT EXISTS (
           SELECT 1 FROM converge_dlq h
            WHERE h.consumer_group = d.consumer_group AND h.topic = d.topic AND h.tenant = d.tenant
              AND h.message_key = d.message_key AND h.status = 'PARKED' AND h.id < d.id)
       ORDER BY d.id LIMIT ?
      """;

  /** Locks held row {@code id} of one of the given topics when it still heads its key. */
  private static final String LOCK_HELD_HEAD = """
      SELECT d.tenant, d.topic, d.message_id, d.broker_message_id, d.message_key, d.headers, d.payload
        FROM converge_dlq d
       WHERE d.id = ? AND d.consumer_group = ? AND d.topic = ANY (?) AND d.status = 'PARKED'
         AND d.reason_code = 'HELD'
         AND NOT EXISTS (
           SELECT 1 FROM converge_dlq h
            WHERE h.consumer_group = d.consumer_group AND h.topic = d.topic AND h.tenant = d.tenant
              AND h.message_key = d.message_key AND h.status = 'PARKED' AND h.id < d.id)
         FOR UPDATE OF d
      """;

  /** Turns a held row that failed when released into a parked head of its key, keeping its place (id). */
  private static final String HELD_TO_PARKED = """
      UPDATE converge_dlq SET reason_code = ?, reason = ?, attempts = ?
       WHERE id = ? AND status = 'PARKED' AND reason_code = 'HELD'
      """;

  private static final String REASON_CODE = "SELECT reason_code FROM converge_dlq WHERE id = ? AND consumer_group = ?";

  private static final String TOPIC = "SELECT topic FROM converge_dlq WHERE id = ? AND consumer_group = ?";

  /** The earliest parked row of the same key before row {@code id} (same group, topic, tenant), if any. */
  private static final String EARLIER_PARKED = """
      SELECT h.id FROM converge_dlq d JOIN converge_dlq h
          ON h.consumer_group = d.consumer_group AND h.topic = d.topic AND h.tenant = d.tenant
         AND h.message_key = d.message_key AND h.status = 'PARKED' AND h.id < d.id
       WHERE d.id = ? AND d.consumer_group = ?
       ORDER BY h.id LIMIT 1
      """;

  private static final String RELEASE_HELD_CLAIM = """
      DELETE FROM converge_dedup WHERE tenant = ? AND consumer_group = ? AND message_id = ? AND outcome = 'HELD'
      """;

  private static final String INSERT_DLQ = """
      INSERT INTO converge_dlq (tenant, consumer_group, topic, message_id, broker_message_id, reason_code, reason,
                                attempts, headers, payload, status, created_at, message_key)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'PARKED', ?, ?)
      """;

  private static final String INSERT_TICKET = """
      INSERT INTO converge_ticket (tenant, consumer_group, topic, message_id, dlq_id, kind, reason, status, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, 'OPEN', ?)
      """;

  private static final String LOCK_PARKED = """
      SELECT topic, message_id, broker_message_id, headers, payload, attempts, message_key
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

  /**
   * The oldest parked row of a group on the given topics that ops marked for re-drive ({@code ConsumerOps.redrive})
   * and that no other instance is re-driving: locked by this transaction, so concurrent instances take different
   * rows.
   */
  private static final String LOCK_NEXT_MARKED = """
      SELECT id FROM converge_dlq
       WHERE consumer_group = ? AND topic = ANY (?) AND status = 'PARKED' AND reason_code = 'REDRIVE' AND id > ?
       ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
      """;

  // the re-drive's mark ("marked for re-drive (was CODE: reason)") stays first, the failure follows it, so a
  // second mark finds the original reason again (ConsumerOps.redrive) instead of nesting it
  private static final String REDRIVE_FAILED = """
      UPDATE converge_dlq SET reason_code = 'REDRIVE_FAILED',
             reason = coalesce(reason, 'marked for re-drive') || '; re-drive failed: ' || ?
       WHERE id = ? AND status = 'PARKED' AND reason_code = 'REDRIVE'
      """;

  /**
   * Locks the oldest row of {@code group} on {@code topics} marked for re-drive with an id above {@code after} that
   * no other transaction holds; 0 when there is none.
   */
  static long lockNextMarked(Connection c, String group, String[] topics, long after) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LOCK_NEXT_MARKED)) {
      bind(ps, group, topics, after);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }

  /**
   * Marks re-drive row {@code dlqId} failed: it stays parked, its reason followed by {@code failure}. False when
   * the row was no longer marked (another instance re-drove it meanwhile).
   */
  static boolean redriveFailed(Connection c, long dlqId, String failure) throws SQLException {
    return update(c, REDRIVE_FAILED, failure, dlqId) == 1;
  }

  /**
   * Up to {@code limit} ids, above {@code after}, of held rows of {@code group} on {@code topics} that head their
   * key, oldest first.
   */
  static List<Long> releasable(Connection c, String group, String[] topics, long after, int limit)
      throws SQLException {
    return ids(c, RELEASABLE, group, topics, after, limit);
  }

  private static List<Long> ids(Connection c, String sql, Object... params) throws SQLException {
    List<Long> ids = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, params);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
    }
    return ids;
  }

  /**
   * Locks held row {@code dlqId} of {@code group} on {@code topics} when it heads its key and rebuilds its message,
   * or null.
   */
  static IncomingMessage lockHeldHead(Connection c, long dlqId, String group, String[] topics) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LOCK_HELD_HEAD)) {
      bind(ps, dlqId, group, topics);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? message(rs, 1) : null;
      }
    }
  }

  /** The reason code of row {@code dlqId} of {@code group}, or null. */
  static String reasonCode(Connection c, long dlqId, String group) throws SQLException {
    return text(c, REASON_CODE, dlqId, group);
  }

  /** The topic of row {@code dlqId} of {@code group}, or null. */
  static String topic(Connection c, long dlqId, String group) throws SQLException {
    return text(c, TOPIC, dlqId, group);
  }

  private static String text(Connection c, String sql, long dlqId, String group) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, dlqId, group);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /** The id of the earliest parked row of row {@code dlqId}'s key that comes before it, or 0 when none does. */
  static long earlierParked(Connection c, long dlqId, String group) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(EARLIER_PARKED)) {
      bind(ps, dlqId, group);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }

  static boolean heldToParked(Connection c, long dlqId, String reasonCode, String reason, int attempts)
      throws SQLException {
    return update(c, HELD_TO_PARKED, reasonCode, reason, attempts, dlqId) == 1;
  }

  static void releaseHeldClaim(Connection c, String tenant, String group, String messageId) throws SQLException {
    update(c, RELEASE_HELD_CLAIM, tenant, group, messageId);
  }

  private static IncomingMessage message(ResultSet rs, int deliveryCount) throws SQLException {
    return IncomingMessage.builder().topic(rs.getString("topic"))
        .headers(HeaderCodec.decode(rs.getString("headers")))
        .payload(rs.getBytes("payload")).brokerMessageId(rs.getString("broker_message_id"))
        .brokerKey(rs.getString("message_key")).deliveryCount(deliveryCount).build();
  }

  static long insertDlq(Connection c, String group, IncomingMessage m, String messageId, String reasonCode,
      String reason, int attempts, Instant now) throws SQLException {
    return insertDlq(c, group, m, new EnvelopeCheck.Stored(m.tenant(), m.topic(), m.brokerMessageId(), m.brokerKey()),
        messageId, reasonCode, reason, attempts, now);
  }

  /** Parks {@code m} with {@code stored}'s tenant, topic, broker id and key in place of its own. */
  static long insertDlq(Connection c, String group, IncomingMessage m, EnvelopeCheck.Stored stored, String messageId,
      String reasonCode, String reason, int attempts, Instant now) throws SQLException {
    return insert(c, INSERT_DLQ, stored.tenant(), group, stored.topic(), messageId, stored.brokerMessageId(),
        reasonCode, reason, attempts, HeaderCodec.encode(m.headers()), m.payload(), now, stored.key());
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
        return message(rs, Math.max(1, rs.getInt("attempts") + 1));
      }
    }
  }

  static void releaseParkedClaim(Connection c, String tenant, String group, String messageId) throws SQLException {
    update(c, RELEASE_PARKED_CLAIM, tenant, group, messageId);
  }

  static void markResumed(Connection c, long dlqId, Instant now) throws SQLException {
    update(c, MARK_RESUMED, now, dlqId);
  }
}
