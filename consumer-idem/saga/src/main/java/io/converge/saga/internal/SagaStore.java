package io.converge.saga.internal;

import io.converge.saga.SagaState;
import io.converge.saga.StaleSagaException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Optional;

/** The SQL of the coordinator's tables; every method runs on the caller's connection (its transaction). Stateless. */
final class SagaStore {

  private static final String COLUMNS = """
      id, tenant, definition, state, step, attempt, sends, failures, awaiting, version, data::text, next_attempt_at,
      deadline, last_error, created_at, traceparent, tracestate""";

  private static final String INSERT = """
      INSERT INTO converge_saga (id, tenant, definition, state, step, version, data, next_attempt_at, deadline,
                                 created_at, updated_at, traceparent, tracestate, send_until, guarded_steps)
      VALUES (?, ?, ?, 'RUNNING', 0, 0, ?::jsonb, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO NOTHING""";

  /** Replies lock the row (it exists: no missing-row lock), so the poller's SKIP LOCKED passes it by. */
  private static final String LOCK = "SELECT " + COLUMNS + " FROM converge_saga WHERE id = ? FOR UPDATE";

  private static final String DUE = "SELECT " + COLUMNS + """
       FROM converge_saga
      WHERE next_attempt_at <= ? AND state IN ('RUNNING', 'COMPENSATING')
      ORDER BY next_attempt_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED""";

  private static final String UPDATE = """
      UPDATE converge_saga
         SET state = ?, step = ?, step_name = ?, attempt = ?, sends = ?, failures = ?, awaiting = ?, data = ?::jsonb,
             next_attempt_at = ?, last_error = ?, updated_at = ?, version = version + 1
       WHERE id = ? AND version = ?""";

  /** A saga that could not be driven is set aside: due again later, with the error; nothing else changes. */
  private static final String SET_ASIDE = """
      UPDATE converge_saga SET next_attempt_at = ?, last_error = ?, updated_at = ?, version = version + 1
       WHERE id = ? AND version = ? AND state IN ('RUNNING', 'COMPENSATING')""";

  private static final String FIRST_SENT = """
      SELECT min(at) FROM converge_saga_event WHERE saga_id = ? AND step = ? AND attempt = ? AND kind = ?""";

  private static final String EVENT = """
      INSERT INTO converge_saga_event (saga_id, step, attempt, kind, message_id, payload, at)
      VALUES (?, ?, ?, ?, ?, ?, ?)""";

  private static final String REPLIED_BEFORE = """
      SELECT 1 FROM converge_saga_event
       WHERE saga_id = ? AND step = ? AND attempt = ? AND kind = ? LIMIT 1""";

  private static final String RECORDED_BEFORE = """
      SELECT 1 FROM converge_saga_event WHERE saga_id = ? AND step = ? AND kind = ? LIMIT 1""";

  /** A note for the person on the ticket: appended to its reason, whatever its status. */
  private static final String NOTE_TICKET = """
      UPDATE converge_saga_ticket SET reason = reason || chr(10) || ?
       WHERE saga_id = ? AND step = ? AND kind = ? AND status = 'OPEN'""";

  private static final String TICKET = """
      INSERT INTO converge_saga_ticket (saga_id, tenant, step, kind, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)""";

  private SagaStore() {
  }

  /**
   * Inserts a new saga; false when one with {@code id} exists.
   *
   * @param trace its trace context ({@code traceparent}, {@code tracestate}), may be empty
   * @param sendUntil until when a command of a step in {@code guardedSteps} may be sent (the participants' retention)
   * @param guardedSteps the indexes of the steps bound by the participants' retention
   */
  static boolean insert(Connection c, String id, String tenant, String definition, String data, Instant next,
      Instant deadline, Instant now, java.util.Map<String, String> trace, Instant sendUntil, Integer[] guardedSteps)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT)) {
      ps.setString(1, id);
      ps.setString(2, tenant);
      ps.setString(3, definition);
      ps.setString(4, data);
      ps.setTimestamp(5, ts(next));
      ps.setTimestamp(6, ts(deadline));
      ps.setTimestamp(7, ts(now));
      ps.setTimestamp(8, ts(now));
      String traceparent = trace.get(io.converge.core.Envelope.TRACEPARENT);
      ps.setString(9, traceparent);
      ps.setString(10, traceparent == null ? null : trace.get("tracestate"));
      ps.setTimestamp(11, ts(sendUntil));
      ps.setArray(12, c.createArrayOf("integer", guardedSteps));
      return ps.executeUpdate() == 1;
    }
  }

  static Optional<SagaRow> lock(Connection c, String id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LOCK)) {
      ps.setString(1, id);
      return read(ps);
    }
  }

  static Optional<SagaRow> claimDue(Connection c, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DUE)) {
      ps.setTimestamp(1, ts(now));
      return read(ps);
    }
  }

  /** The compare-and-swap of a transition. @throws StaleSagaException when {@code before}'s version moved on */
  static SagaRow update(Connection c, SagaRow before, SagaRow after, String stepName, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(UPDATE)) {
      ps.setString(1, after.state().name());
      ps.setInt(2, after.step());
      ps.setString(3, after.state().active() ? stepName : null);
      ps.setInt(4, after.attempt());
      ps.setInt(5, after.sends());
      ps.setInt(6, after.failures());
      ps.setBoolean(7, after.awaiting());
      ps.setString(8, after.data());
      ps.setTimestamp(9, ts(after.nextAttemptAt()));
      ps.setString(10, after.lastError());
      ps.setTimestamp(11, ts(now));
      ps.setString(12, before.id());
      ps.setLong(13, before.version());
      if (ps.executeUpdate() != 1) {
        throw new StaleSagaException(before.id(), before.version());
      }
    }
    return new SagaRow(after.id(), after.tenant(), after.definition(), after.state(), after.step(), after.attempt(),
        after.sends(), after.failures(), after.awaiting(), before.version() + 1, after.data(), after.nextAttemptAt(),
        after.deadline(), after.lastError(), after.createdAt(), before.traceparent(), before.tracestate());
  }

  /** Sets {@code saga} aside until {@code next}; false when it moved on meanwhile (then nothing changes). */
  static boolean setAside(Connection c, SagaRow saga, Instant next, String error, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SET_ASIDE)) {
      ps.setTimestamp(1, ts(next));
      ps.setString(2, error);
      ps.setTimestamp(3, ts(now));
      ps.setString(4, saga.id());
      ps.setLong(5, saga.version());
      return ps.executeUpdate() == 1;
    }
  }

  static void event(Connection c, String sagaId, String step, Integer attempt, String kind, String messageId,
      String payload, Instant at) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(EVENT)) {
      ps.setString(1, sagaId);
      ps.setString(2, step);
      if (attempt == null) {
        ps.setNull(3, java.sql.Types.INTEGER);
      } else {
        ps.setInt(3, attempt);
      }
      ps.setString(4, kind);
      ps.setString(5, messageId);
      ps.setString(6, payload);
      ps.setTimestamp(7, ts(at));
      ps.executeUpdate();
    }
  }

  /** When the command of (saga, step, attempt) was first sent ({@code SENT} or {@code COMPENSATION_SENT}); null if never. */
  static Instant firstSent(Connection c, String sagaId, String step, int attempt, String kind) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(FIRST_SENT)) {
      ps.setString(1, sagaId);
      ps.setString(2, step);
      ps.setInt(3, attempt);
      ps.setString(4, kind);
      try (ResultSet rs = ps.executeQuery()) {
        java.sql.Timestamp at = rs.next() ? rs.getTimestamp(1) : null;
        return at == null ? null : at.toInstant();
      }
    }
  }

  static boolean repliedBefore(Connection c, String sagaId, String step, int attempt, String kind) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(REPLIED_BEFORE)) {
      ps.setString(1, sagaId);
      ps.setString(2, step);
      ps.setInt(3, attempt);
      ps.setString(4, kind);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  static boolean recordedBefore(Connection c, String sagaId, String step, String kind) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RECORDED_BEFORE)) {
      ps.setString(1, sagaId);
      ps.setString(2, step);
      ps.setString(3, kind);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Appends {@code note} to the reason of {@code saga}'s tickets of {@code kind} at {@code step}; how many. */
  static int noteTicket(Connection c, SagaRow saga, String step, String kind, String note) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(NOTE_TICKET)) {
      ps.setString(1, note);
      ps.setString(2, saga.id());
      ps.setString(3, step);
      ps.setString(4, kind);
      return ps.executeUpdate();
    }
  }

  static void ticket(Connection c, SagaRow saga, String step, String kind, String reason, Instant now)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(TICKET)) {
      ps.setString(1, saga.id());
      ps.setString(2, saga.tenant());
      ps.setString(3, step);
      ps.setString(4, kind);
      ps.setString(5, reason);
      ps.setTimestamp(6, ts(now));
      ps.executeUpdate();
    }
  }

  /** A ticket of a saga that has no row (purged). */
  static void orphanTicket(Connection c, String sagaId, String tenant, String step, String kind, String reason,
      Instant now)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(TICKET)) {
      ps.setString(1, sagaId);
      ps.setString(2, tenant);
      ps.setString(3, step);
      ps.setString(4, kind);
      ps.setString(5, reason);
      ps.setTimestamp(6, ts(now));
      ps.executeUpdate();
    }
  }

  private static Optional<SagaRow> read(PreparedStatement ps) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        return Optional.empty();
      }
      return Optional.of(new SagaRow(rs.getString(1), rs.getString(2), rs.getString(3),
          SagaState.valueOf(rs.getString(4)), rs.getInt(5), rs.getInt(6), rs.getInt(7), rs.getInt(8),
          rs.getBoolean(9), rs.getLong(10), rs.getString(11), instant(rs.getTimestamp(12)),
          instant(rs.getTimestamp(13)), rs.getString(14), instant(rs.getTimestamp(15)), rs.getString(16),
          rs.getString(17)));
    }
  }

  private static Timestamp ts(Instant i) {
    return i == null ? null : Timestamp.from(i);
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
