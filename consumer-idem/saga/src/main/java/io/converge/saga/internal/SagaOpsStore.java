package io.converge.saga.internal;

import io.converge.core.internal.DatabaseErrors;
import io.converge.saga.SagaBranchRetention;
import io.converge.saga.SagaOperationRefusedException;
import io.converge.saga.SagaTooOldException;
import io.converge.saga.SagaOps;
import io.converge.saga.SagaState;
import io.converge.saga.TccDefinition;
import io.converge.saga.StaleSagaException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SQL of {@link SagaOps}: reads of the saga tables, and the operators' actions, each one transaction of a
 * compare-and-swap on the saga's version (or on a ticket's status) and its event. Thread-safe (stateless apart from
 * its data source and clock).
 */
public final class SagaOpsStore {

  private static final Logger log = LoggerFactory.getLogger(SagaOpsStore.class);

  private static final String SAGA = """
      SELECT s.id, s.definition, s.state, s.step_name, s.attempt, s.version, s.created_at, s.next_attempt_at,
             s.last_error,
             (SELECT count(*) FROM converge_saga_ticket t WHERE t.saga_id = s.id AND t.status = 'OPEN') AS open_tickets,
             s.tenant, s.step, s.sends, s.failures, s.awaiting, s.data::text, s.deadline, s.updated_at
        FROM converge_saga s""";

  /** Intermediate, or waiting for a person; then the filter's states, definition and age. */
  private static final String LISTED = """
      WHERE (s.state IN ('RUNNING', 'COMPENSATING')
             OR s.id IN (SELECT saga_id FROM converge_saga_ticket WHERE status = 'OPEN'))
        AND s.state = ANY (?)
        AND (?::text IS NULL OR s.definition = ?::text)
        AND s.created_at <= ?""";

  private static final String LIST = SAGA + "\n" + LISTED + "\n ORDER BY s.created_at, s.id LIMIT ?";
  private static final String COUNT = "SELECT count(*) FROM converge_saga s\n" + LISTED;
  private static final String ONE = SAGA + " WHERE s.id = ?";

  /**
   * The send guard stored at the saga's start (V5): whether it is stored at all, whether the current step is bound by
   * the retention and {@code now} (the parameter) is past the horizon, and the horizon.
   */
  private static final String SEND_GUARD = """
      SELECT guarded_steps IS NULL, COALESCE(step = ANY (guarded_steps) AND ? >= send_until, false), send_until
        FROM converge_saga WHERE id = ?""";

  private static final String EVENTS = """
      SELECT seq, step, attempt, kind, message_id, payload, at FROM converge_saga_event
       WHERE saga_id = ? ORDER BY seq""";

  private static final String TICKET_COLUMNS = """
      id, saga_id, step, kind, reason, status, created_at, resolved_at, resolved_by, resolution""";
  private static final String TICKETS = "SELECT " + TICKET_COLUMNS
      + " FROM converge_saga_ticket WHERE saga_id = ? ORDER BY id";
  private static final String TICKET = "SELECT " + TICKET_COLUMNS + " FROM converge_saga_ticket WHERE id = ?";
  /** Open tickets of sagas that have no row: a compensation's SUCCESS recorded after its saga's purge. */
  private static final String ORPHAN_TICKETS = "SELECT " + TICKET_COLUMNS + """

       FROM converge_saga_ticket t
      WHERE t.status = 'OPEN' AND NOT EXISTS (SELECT 1 FROM converge_saga s WHERE s.id = t.saga_id)
      ORDER BY t.created_at, t.id LIMIT ?""";

  /** A due send or compensation again, now: its command counts as not out, so the poll sends it (same id). */
  private static final String RETRY_ACTIVE = """
      UPDATE converge_saga SET awaiting = false, next_attempt_at = ?, updated_at = ?, version = version + 1
       WHERE id = ? AND version = ? AND state IN ('RUNNING', 'COMPENSATING')""";

  /** Back to compensating the step that failed, with a new attempt and its failures counted anew. */
  private static final String RETRY_FAILED = """
      UPDATE converge_saga
         SET state = 'COMPENSATING', attempt = attempt + 1, failures = 0, awaiting = false, next_attempt_at = ?,
             step_name = (SELECT t.step FROM converge_saga_ticket t
                           WHERE t.saga_id = converge_saga.id AND t.kind = 'COMPENSATION_FAILED'
                           ORDER BY t.id DESC LIMIT 1),
             updated_at = ?, version = version + 1
       WHERE id = ? AND version = ? AND state = 'COMPENSATION_FAILED'""";

  /** The coordinator's deadline path: at its next poll a RUNNING saga past its deadline compensates. */
  private static final String COMPENSATE = """
      UPDATE converge_saga SET deadline = least(deadline, ?), next_attempt_at = ?, updated_at = ?,
             version = version + 1
       WHERE id = ? AND version = ? AND state = 'RUNNING'""";

  private static final String RESOLVE = """
      UPDATE converge_saga_ticket SET status = 'RESOLVED', resolved_at = ?, resolved_by = ?, resolution = ?
       WHERE status = 'OPEN' AND """;
  private static final String RESOLVE_SAGA = RESOLVE + " saga_id = ? RETURNING " + TICKET_COLUMNS;
  private static final String RESOLVE_TICKET = RESOLVE + " id = ? RETURNING " + TICKET_COLUMNS;

  private final DataSource dataSource;
  private final Clock clock;
  private final SagaBranchRetention participantRetention;

  /**
   * The store on {@code dataSource}, times from {@code clock}; retry and compensate refuse a saga past
   * {@code participantRetention}'s send horizon.
   */
  public SagaOpsStore(DataSource dataSource, Clock clock, SagaBranchRetention participantRetention) {
    this.dataSource = dataSource;
    this.clock = clock;
    this.participantRetention = participantRetention;
  }

  /** {@link SagaOps#list}. */
  public List<SagaOps.Saga> list(SagaOps.Filter filter) {
    Instant now = clock.instant();
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(LIST)) {
      int next = bind(c, ps, filter, now);
      ps.setInt(next, filter.limit());
      List<SagaOps.Saga> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(saga(rs, now));
        }
      }
      return out;
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not list the sagas", null, e);
    }
  }

  /** {@link SagaOps#count}. */
  public long count(SagaOps.Filter filter) {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(COUNT)) {
      bind(c, ps, filter, clock.instant());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not count the sagas", null, e);
    }
  }

  /** {@link SagaOps#orphanTickets}. */
  public List<SagaOps.Ticket> orphanTickets(int limit) {
    try (Connection c = dataSource.getConnection()) {
      return tickets(c, ORPHAN_TICKETS, ps -> ps.setInt(1, limit));
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not list the open tickets of purged sagas", null, e);
    }
  }

  /** {@link SagaOps#show}. */
  public Optional<SagaOps.Detail> show(String id) {
    Instant now = clock.instant();
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(ONE)) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(new SagaOps.Detail(saga(rs, now), rs.getString(11), rs.getInt(12), rs.getInt(13),
            rs.getInt(14), rs.getBoolean(15), rs.getString(16), instant(rs, 17), instant(rs, 18), events(c, id),
            tickets(c, TICKETS, ps2 -> ps2.setString(1, id))));
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not read saga " + id, null, e);
    }
  }

  /** {@link SagaOps#retry}. */
  public SagaOps.Saga retry(String id, String operator, String note) {
    return act(id, "retry", c -> {
      SagaOps.Saga before = current(c, id);
      Instant now = clock.instant();
      String sql;
      switch (before.state()) {
        case RUNNING, COMPENSATING -> sql = RETRY_ACTIVE;
        case COMPENSATION_FAILED -> sql = RETRY_FAILED;
        default -> throw refused(before, "retry applies to RUNNING, COMPENSATING and COMPENSATION_FAILED sagas");
      }
      refuseTooOld(c, before, now);
      SagaOps.Saga after = swap(c, before, sql, ps -> {
        ps.setTimestamp(1, ts(now));
        ps.setTimestamp(2, ts(now));
        ps.setString(3, id);
        ps.setLong(4, before.version());
      });
      event(c, after, "OPERATOR_RETRY", operator, note, now);
      log.warn("Saga {} retried by {}: was {}, now {} at step '{}' attempt {}, due now", id, operator, before.state(),
          after.state(), after.stepName(), after.attempt());
      return after;
    });
  }

  /** {@link SagaOps#compensate}. */
  public SagaOps.Saga compensate(String id, String operator, String note) {
    return act(id, "compensate", c -> {
      SagaOps.Saga before = current(c, id);
      if (before.state() != SagaState.RUNNING) {
        throw refused(before, "compensate applies to RUNNING sagas only");
      }
      // Only a TccDefinition's Confirm steps are known by name here (no definitions are reachable from SagaOps). A
      // mixed saga's Confirm step (tccConfirm, any name) passes this guard, harmlessly: the coordinator ignores the
      // deadline at a Confirm step (asked until it succeeds), and a compensation begun after it stops at the Confirm
      // (STOPPED, a ticket) without sending the Cancel.
      if (before.stepName() != null && before.stepName().endsWith(TccDefinition.CONFIRM_SUFFIX)) {
        // a TCC global transaction past its Try phase: the decision is Confirm, and some branches may be confirmed
        throw refused(before, "it is a TCC global transaction confirming its branches (step '" + before.stepName()
            + "'): a Confirm is never cancelled");
      }
      Instant now = clock.instant();
      refuseTooOld(c, before, now);
      SagaOps.Saga after = swap(c, before, COMPENSATE, ps -> {
        ps.setTimestamp(1, ts(now));
        ps.setTimestamp(2, ts(now));
        ps.setTimestamp(3, ts(now));
        ps.setString(4, id);
        ps.setLong(5, before.version());
      });
      event(c, after, "OPERATOR_COMPENSATE", operator, note, now);
      log.warn("Saga {} sent to compensation by {} (at step '{}'): deadline now", id, operator, before.stepName());
      return after;
    });
  }

  /** {@link SagaOps#resolve} ({@code sagaId}) and {@link SagaOps#resolveTicket} ({@code ticketId}). */
  public List<SagaOps.Ticket> resolve(String sagaId, Long ticketId, String operator, String resolution) {
    String what = sagaId != null ? "saga " + sagaId : "ticket " + ticketId;
    return act(sagaId, "resolve " + what, c -> {
      Instant now = clock.instant();
      List<SagaOps.Ticket> closed = tickets(c, sagaId != null ? RESOLVE_SAGA : RESOLVE_TICKET, ps -> {
        ps.setTimestamp(1, ts(now));
        ps.setString(2, operator);
        ps.setString(3, resolution);
        if (sagaId != null) {
          ps.setString(4, sagaId);
        } else {
          ps.setLong(4, ticketId);
        }
      });
      if (closed.isEmpty()) {
        throw sagaId != null ? refused(current(c, sagaId), "it has no open ticket") : ticketNotOpen(c, ticketId);
      }
      for (SagaOps.Ticket t : closed) {
        SagaStore.event(c, t.sagaId(), t.step(), null, "OPERATOR_RESOLVED", null,
            note(operator, resolution) + " (ticket " + t.id() + ")", now);
        log.warn("Saga {}: ticket {} ({}) resolved by {}", t.sagaId(), t.id(), t.kind(), operator);
      }
      return closed;
    });
  }

  @FunctionalInterface
  private interface Work<T> {

    T run(Connection c) throws SQLException;
  }

  @FunctionalInterface
  private interface Binder {

    void bind(PreparedStatement ps) throws SQLException;
  }

  /** Runs {@code work} in one transaction: committed when it returns, rolled back when it throws. */
  private <T> T act(String sagaId, String action, Work<T> work) {
    try (Connection c = dataSource.getConnection()) {
      boolean auto = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        T result = work.run(c);
        c.commit();
        return result;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(auto);
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not " + action + (sagaId != null && !action.contains(sagaId)
          ? " saga " + sagaId
          : ""), null, e);
    }
  }

  /** The saga as it is; refused when there is none. */
  private SagaOps.Saga current(Connection c, String id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ONE)) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new SagaOperationRefusedException("no saga " + id, id, null);
        }
        return saga(rs, clock.instant());
      }
    }
  }

  /** The compare-and-swap {@code sql} of {@code before}; the saga after it. */
  private SagaOps.Saga swap(Connection c, SagaOps.Saga before, String sql, Binder binder) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      if (ps.executeUpdate() != 1) {
        log.info("Saga {} changed while an operator acted on it (expected version {}); nothing changed", before.id(),
            before.version());
        throw new StaleSagaException(before.id(), before.version());
      }
    }
    return current(c, before.id());
  }

  /**
   * The coordinator would send a command of {@code saga}'s current step after the action: refused where its send
   * guard would refuse it ({@code Transitions.pastParticipantRetention}), by what the saga stored at its start: the
   * steps bound by the participants' retention ({@code guarded_steps}, a {@code SagaParticipant}'s; not a TCC
   * branch's, whose barrier keeps an unfinished branch's rows) and the horizon ({@code send_until}, its start plus
   * the coordinator's retention less the margin). A saga started before these columns is judged by this instance's
   * configured participant retention, whatever its step.
   */
  private void refuseTooOld(Connection c, SagaOps.Saga saga, Instant now) throws SQLException {
    boolean stored;
    boolean past;
    Instant sendUntil;
    try (PreparedStatement ps = c.prepareStatement(SEND_GUARD)) {
      ps.setTimestamp(1, ts(now));
      ps.setString(2, saga.id());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) { // purged since it was read
          throw new SagaOperationRefusedException("no saga " + saga.id(), saga.id(), null);
        }
        stored = !rs.getBoolean(1);
        past = rs.getBoolean(2);
        sendUntil = stored ? instant(rs, 3) : null;
      }
    }
    if (!stored) {
      past = !participantRetention.maySend(saga.createdAt(), now);
    }
    if (past) {
      Duration age = Duration.between(saga.createdAt(), now);
      Duration horizon = stored ? Duration.between(saga.createdAt(), sendUntil) : participantRetention.sendHorizon();
      log.warn("Saga {}: an operator's action refused, the saga is {} old (past {})", saga.id(), age, horizon);
      throw new SagaTooOldException(saga.id(), saga.state(), age, horizon);
    }
  }

  private static SagaOperationRefusedException refused(SagaOps.Saga saga, String why) {
    return new SagaOperationRefusedException("saga " + saga.id() + " is " + saga.state() + ": " + why, saga.id(),
        saga.state());
  }

  private SagaOperationRefusedException ticketNotOpen(Connection c, long ticketId) throws SQLException {
    List<SagaOps.Ticket> found = tickets(c, TICKET, ps -> ps.setLong(1, ticketId));
    if (found.isEmpty()) {
      return new SagaOperationRefusedException("no ticket " + ticketId, null, null);
    }
    SagaOps.Ticket t = found.get(0);
    return new SagaOperationRefusedException("ticket " + ticketId + " of saga " + t.sagaId() + " is " + t.status()
        + " (by " + t.resolvedBy() + " at " + t.resolvedAt() + ")", t.sagaId(), null);
  }

  private void event(Connection c, SagaOps.Saga saga, String kind, String operator, String note, Instant now)
      throws SQLException {
    SagaStore.event(c, saga.id(), saga.stepName(), saga.attempt(), kind, null, note(operator, note), now);
  }

  private static String note(String operator, String note) {
    return note == null || note.isBlank() ? operator : operator + ": " + note;
  }

  private int bind(Connection c, PreparedStatement ps, SagaOps.Filter filter, Instant now) throws SQLException {
    ps.setArray(1, c.createArrayOf("text", filter.states().stream().map(Enum::name).toArray()));
    ps.setString(2, filter.definition());
    ps.setString(3, filter.definition());
    ps.setTimestamp(4, ts(now.minus(filter.olderThan())));
    return 5;
  }

  private static SagaOps.Saga saga(ResultSet rs, Instant now) throws SQLException {
    Instant created = instant(rs, 7);
    return new SagaOps.Saga(rs.getString(1), rs.getString(2), SagaState.valueOf(rs.getString(3)), rs.getString(4),
        rs.getInt(5), rs.getLong(6), created, Duration.between(created, now), instant(rs, 8), rs.getString(9),
        rs.getInt(10));
  }

  private static List<SagaOps.Event> events(Connection c, String id) throws SQLException {
    List<SagaOps.Event> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(EVENTS)) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int attempt = rs.getInt(3);
          Integer orNull = rs.wasNull() ? null : attempt;
          out.add(new SagaOps.Event(rs.getLong(1), rs.getString(2), orNull, rs.getString(4),
              rs.getString(5), rs.getString(6), instant(rs, 7)));
        }
      }
    }
    return out;
  }

  private static List<SagaOps.Ticket> tickets(Connection c, String sql, Binder binder) throws SQLException {
    List<SagaOps.Ticket> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new SagaOps.Ticket(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4),
              rs.getString(5), rs.getString(6), instant(rs, 7), instant(rs, 8), rs.getString(9), rs.getString(10)));
        }
      }
    }
    out.sort((a, b) -> Long.compare(a.id(), b.id()));
    return out;
  }

  private static Timestamp ts(Instant i) {
    return Timestamp.from(i);
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    Timestamp t = rs.getTimestamp(column);
    return t == null ? null : t.toInstant();
  }
}
