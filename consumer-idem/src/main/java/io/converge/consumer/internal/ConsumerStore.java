package io.converge.consumer.internal;

import io.converge.consumer.IncomingMessage;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

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
   * The hot path in one round trip: the hold check, the claim and the removal of attempt rows earlier
   * failures left (only when the claim succeeded; any failure of the handler rolls the removal back with the
   * claim, and the failure's outcome is recorded in a transaction of its own). When the message's key has a
   * parked row nothing is claimed and the result is 2 (held); else 1 (claimed) or 0 (a duplicate). The hold
   * check is one probe of the partial index {@code converge_dlq_parked_key}, empty while nothing is parked;
   * a message without key never matches ({@code message_key = NULL} is not true).
   */
  private static final String CLAIM_FOR_HANDLER = """
      WITH held AS (
        SELECT 1 FROM converge_dlq
         WHERE consumer_group = ? AND topic = ? AND tenant = ? AND message_key = ? AND status = 'PARKED'
         LIMIT 1),
      claimed AS (
        INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, detail, topic, processed_at)
        SELECT ?, ?, ?, 'PROCESSED', NULL, ?, ? WHERE NOT EXISTS (SELECT 1 FROM held)
        ON CONFLICT (tenant, consumer_group, message_id) DO NOTHING
        RETURNING 1),
      cleared AS (
        DELETE FROM converge_consumer_attempt
         WHERE tenant = ? AND consumer_group = ? AND message_id = ? AND EXISTS (SELECT 1 FROM claimed))
      SELECT (SELECT count(*) FROM claimed) + CASE WHEN EXISTS (SELECT 1 FROM held) THEN 2 ELSE 0 END
      """;

  /** The result of {@link #claimForHandler} when the key is held. */
  static final int HELD = 2;

  /** The error text that {@link #CLAIM_OR_REFUSE} fails with for a duplicate. */
  static final String REFUSED_DUPLICATE = "converge-claim-duplicate";

  /** The error text that {@link #CLAIM_OR_REFUSE} fails with for a held key. */
  static final String REFUSED_HELD = "converge-claim-held";

  /**
   * {@link #CLAIM_FOR_HANDLER} as a statement that fails unless it claimed (its text cast to an integer
   * fails with {@link #REFUSED_DUPLICATE} or {@link #REFUSED_HELD}), so that a statement sent after it in
   * the same round trip never runs for a duplicate or a held key: the error aborts the transaction first
   * and the server skips the rest of the pipeline. Same parameters as {@link #CLAIM_FOR_HANDLER}.
   */
  static final String CLAIM_OR_REFUSE = CLAIM_FOR_HANDLER.substring(0,
      CLAIM_FOR_HANDLER.lastIndexOf("\nSELECT (SELECT count") + 1)
      + "SELECT (CASE WHEN EXISTS (SELECT 1 FROM held) THEN '" + REFUSED_HELD + "'"
      + " WHEN EXISTS (SELECT 1 FROM claimed) THEN '1' ELSE '" + REFUSED_DUPLICATE + "' END)::int";

  /** The number of parameters of {@link #CLAIM_FOR_HANDLER} and {@link #CLAIM_OR_REFUSE}. */
  static final int CLAIM_PARAMETERS = 12;

  /** Binds the parameters of {@link #CLAIM_OR_REFUSE} (1 to {@link #CLAIM_PARAMETERS}). */
  static void bindClaim(PreparedStatement ps, String tenant, String group, String messageId, String topic, String key,
      Instant now) throws SQLException {
    bind(ps, group, topic, tenant, key, tenant, group, messageId, topic, now, tenant, group, messageId);
  }

  /**
   * The held rows of a group that head their key (no earlier parked row of the key), oldest first.
   */
  private static final String RELEASABLE = """
      SELECT d.id FROM converge_dlq d
       WHERE d.consumer_group = ? AND d.status = 'PARKED' AND d.reason_code = 'HELD' AND d.message_key IS NOT NULL
         AND NOT EXISTS (
           SELECT 1 FROM converge_dlq h
            WHERE h.consumer_group = d.consumer_group AND h.topic = d.topic AND h.tenant = d.tenant
              AND h.message_key = d.message_key AND h.status = 'PARKED' AND h.id < d.id)
       ORDER BY d.id LIMIT ?
      """;

  /** Locks held row {@code id} when it still heads its key. */
  private static final String LOCK_HELD_HEAD = """
      SELECT d.tenant, d.topic, d.message_id, d.broker_message_id, d.message_key, d.headers, d.payload
        FROM converge_dlq d
       WHERE d.id = ? AND d.consumer_group = ? AND d.status = 'PARKED' AND d.reason_code = 'HELD'
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
  static int claimForHandler(Connection c, String tenant, String group, String messageId, String topic, String key,
      Instant now) throws SQLException {
    return queryInt(c, CLAIM_FOR_HANDLER, 0, group, topic, tenant, key, tenant, group, messageId, topic, now, tenant,
        group, messageId);
  }

  /**
   * The oldest parked row of a group that ops marked for re-drive ({@code ConsumerOps.redrive}) and that no other
   * instance is re-driving: locked by this transaction, so concurrent instances take different rows.
   */
  private static final String LOCK_NEXT_MARKED = """
      SELECT id FROM converge_dlq
       WHERE consumer_group = ? AND status = 'PARKED' AND reason_code = 'REDRIVE' AND id > ?
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
   * Locks the oldest row of {@code group} marked for re-drive with an id above {@code after} that no other
   * transaction holds; 0 when there is none.
   */
  static long lockNextMarked(Connection c, String group, long after) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LOCK_NEXT_MARKED)) {
      bind(ps, group, after);
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

  /** Up to {@code limit} ids of held rows of {@code group} that head their key, oldest first. */
  static List<Long> releasable(Connection c, String group, int limit) throws SQLException {
    return ids(c, RELEASABLE, group, limit);
  }

  private static List<Long> ids(Connection c, String sql, String group, int limit) throws SQLException {
    List<Long> ids = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, group, limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
    }
    return ids;
  }

  /** Locks held row {@code dlqId} of {@code group} when it heads its key and rebuilds its message, or null. */
  static IncomingMessage lockHeldHead(Connection c, long dlqId, String group) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LOCK_HELD_HEAD)) {
      bind(ps, dlqId, group);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? message(rs, 1) : null;
      }
    }
  }

  /** The reason code of row {@code dlqId} of {@code group}, or null. */
  static String reasonCode(Connection c, long dlqId, String group) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(REASON_CODE)) {
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
        HeaderCodec.encode(m.headers()), m.payload(), now, m.brokerKey());
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
