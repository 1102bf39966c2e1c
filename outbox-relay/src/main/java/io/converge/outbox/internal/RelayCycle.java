package io.converge.outbox.internal;

import io.converge.outbox.OutboxRelayBuilder.Settings;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.SendAllResult;
import io.converge.producer.BrokerUnavailableException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
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
 * head). Used by one thread.
 */
final class RelayCycle {

  private static final Logger LOG = LoggerFactory.getLogger(RelayCycle.class);

  static final String CLAIM_HEADS = """
      SELECT o.seq, o.order_key FROM converge_outbox o
      WHERE o.published_at IS NULL AND o.parked_at IS NULL
        AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= now())
        AND NOT EXISTS (SELECT 1 FROM converge_outbox p
                        WHERE p.order_key = o.order_key AND p.seq < o.seq AND p.published_at IS NULL)
      ORDER BY o.seq
      LIMIT ?
      FOR UPDATE OF o SKIP LOCKED
      """;
  static final String ROWS_OF_KEYS = """
      SELECT seq, message_id, topic, order_key, msg_key, tag, header_names, header_values, payload, attempts
      FROM converge_outbox
      WHERE order_key = ANY (?) AND published_at IS NULL AND parked_at IS NULL
      ORDER BY seq
      LIMIT ?
      """;
  static final String MARK_PUBLISHED = "UPDATE converge_outbox SET published_at = now() WHERE seq = ANY (?)";
  static final String REFUSED = """
      UPDATE converge_outbox
      SET attempts = attempts + 1, last_error = ?, next_attempt_at = now() + make_interval(secs => ?),
          parked_at = CASE WHEN attempts + 1 >= ? THEN now() END
      WHERE seq = ?
      """;
  static final String UNAVAILABLE = """
      UPDATE converge_outbox SET last_error = ?, next_attempt_at = now() + make_interval(secs => ?) WHERE seq = ?
      """;

  /** What one cycle did. */
  record Result(int published, int refused, int parked, boolean brokerUnavailable) {}

  private final Settings settings;
  private final Backoff retry;

  RelayCycle(Settings settings, Backoff retry) {
    this.settings = settings;
    this.retry = retry;
  }

  Result run(Connection c) throws SQLException {
    c.setAutoCommit(false);
    try {
      Result r = claimSendMark(c);
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

  private Result claimSendMark(Connection c) throws SQLException {
    Set<String> keys = new HashSet<>();
    try (PreparedStatement ps = c.prepareStatement(CLAIM_HEADS)) {
      ps.setInt(1, settings.batchSize());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          keys.add(rs.getString(2));
        }
      }
    }
    if (keys.isEmpty()) {
      return new Result(0, 0, 0, false);
    }
    List<OutboxRecord> rows = rows(c, keys);
    SendAllResult result = settings.sink().sendAll(rows);
    List<Long> sent = new ArrayList<>(result.sent().size());
    for (OutboxRecord r : result.sent()) {
      sent.add(r.seq());
    }
    int refused = 0;
    int parked = 0;
    boolean unavailable = false;
    for (SendAllResult.Failure f : result.failed()) {
      OutboxRecord row = f.record();
      Exception e = f.error();
      if (e instanceof BrokerUnavailableException) {
        unavailable = true;
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
    return new Result(sent.size(), refused, parked, unavailable && sent.isEmpty());
  }

  private List<OutboxRecord> rows(Connection c, Set<String> keys) throws SQLException {
    List<OutboxRecord> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(ROWS_OF_KEYS)) {
      ps.setArray(1, c.createArrayOf("text", keys.toArray()));
      ps.setInt(2, Math.max(settings.batchSize(), keys.size()) * 2);
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
