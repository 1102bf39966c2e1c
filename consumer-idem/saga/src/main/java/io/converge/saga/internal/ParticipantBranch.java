package io.converge.saga.internal;

import io.converge.consumer.BusinessException;
import io.converge.consumer.IncomingMessage;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnContext;
import io.converge.saga.ParticipantOutcome;
import io.converge.saga.ReplyClass;
import io.converge.saga.SagaHeaders;
import io.converge.saga.SagaMetrics;
import io.converge.saga.StepWork;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A participant's barrier and stored replies in {@code converge_saga_branch}: inserts first
 * ({@code ON CONFLICT DO NOTHING}), reads only rows that exist (committed by the transaction the insert waited
 * for). Rows are dated by the database's clock ({@code now()}): the age {@code SagaBranchPurger} counts. Thread-safe.
 */
public final class ParticipantBranch {

  private static final Logger log = LoggerFactory.getLogger(ParticipantBranch.class);

  private static final String INSERT = """
      INSERT INTO converge_saga_branch (participant, saga_id, step, direction, outcome, command_id, reply, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, now())
      ON CONFLICT DO NOTHING""";
  private static final String READ = """
      SELECT outcome, reply FROM converge_saga_branch
       WHERE participant = ? AND saga_id = ? AND step = ? AND direction = ?""";
  private static final String SET = """
      UPDATE converge_saga_branch SET outcome = ?, reply = ?
       WHERE participant = ? AND saga_id = ? AND step = ? AND direction = ?""";
  /** The reason of the anomaly replied to a compensation whose forward work ran but that has no undo. */
  public static final String NO_UNDO = "NO_UNDO";
  private static final byte[] NONE = new byte[0];
  private static final byte[] EMPTY_JSON = "{}".getBytes(StandardCharsets.UTF_8);

  private final String participant;
  private final SagaMetrics metrics;

  /** The barrier of {@code participant}. */
  public ParticipantBranch(String participant, SagaMetrics metrics) {
    this.participant = participant;
    this.metrics = metrics;
  }

  private record Command(String sagaId, String step, String direction, String commandId) {
  }

  private record Stored(String outcome, byte[] reply) {
  }

  /** Handles one command in {@code tx}. */
  public ParticipantOutcome handle(TxnContext tx, IncomingMessage m, Map<String, StepWork> forward,
      Map<String, StepWork> compensations) throws Exception {
    Command cmd = new Command(m.header(SagaHeaders.SAGA_ID), m.header(SagaHeaders.STEP),
        m.header(SagaHeaders.DIRECTION), m.header(SagaHeaders.COMMAND_ID));
    if (cmd.sagaId() == null || cmd.step() == null || m.header(SagaHeaders.REPLY_TO) == null
        || m.header(SagaHeaders.ATTEMPT) == null
        || !(SagaHeaders.FORWARD.equals(cmd.direction()) || SagaHeaders.COMPENSATE.equals(cmd.direction()))) {
      throw new BusinessException("NOT_A_SAGA_COMMAND", "participant '" + participant
          + "' got a message without the saga headers: " + m);
    }
    if (!forward.containsKey(cmd.step())) {
      throw new BusinessException("UNKNOWN_STEP", "participant '" + participant + "' serves no step '"
          + cmd.step() + "'");
    }
    Connection c = tx.connection();
    Savepoint start = c.setSavepoint();
    return SagaHeaders.FORWARD.equals(cmd.direction())
        ? forward(tx, c, start, m, cmd, forward.get(cmd.step()))
        : compensate(tx, c, start, m, cmd, compensations.get(cmd.step()));
  }

  private ParticipantOutcome forward(TxnContext tx, Connection c, Savepoint start, IncomingMessage m, Command cmd,
      StepWork work) throws SQLException {
    if (!insert(c, cmd, SagaHeaders.FORWARD, "RUNNING")) {
      Stored s = read(c, cmd, SagaHeaders.FORWARD);
      if ("PREVENTED".equals(s.outcome())) {
        metrics.hangingRefused(participant, cmd.step());
        log.warn("Participant '{}' refused the forward command of saga {} step '{}': its compensation came first "
            + "(a hanging branch); the work did not run", participant, cmd.sagaId(), cmd.step());
        reply(tx, m, ReplyClass.BUSINESS_FAILURE.name(), "HANGING_REFUSED", NONE);
        return ParticipantOutcome.HANGING_REFUSED;
      }
      reply(tx, m, s.outcome(), null, s.reply());
      return ParticipantOutcome.REPLAYED;
    }
    Savepoint beforeWork = c.setSavepoint();
    try {
      byte[] out = work.run(c, m);
      set(c, cmd, SagaHeaders.FORWARD, ReplyClass.SUCCESS.name(), out);
      reply(tx, m, ReplyClass.SUCCESS.name(), null, out);
      return ParticipantOutcome.DONE;
    } catch (BusinessException e) {
      c.rollback(beforeWork);
      byte[] out = e.getMessage().getBytes(StandardCharsets.UTF_8);
      set(c, cmd, SagaHeaders.FORWARD, ReplyClass.BUSINESS_FAILURE.name(), out);
      reply(tx, m, ReplyClass.BUSINESS_FAILURE.name(), e.reasonCode(), out);
      return ParticipantOutcome.REFUSED;
    } catch (Exception e) {
      return failed(tx, c, start, m, cmd, e);
    }
  }

  private ParticipantOutcome compensate(TxnContext tx, Connection c, Savepoint start, IncomingMessage m, Command cmd,
      StepWork undo) throws SQLException {
    if (!insert(c, cmd, SagaHeaders.COMPENSATE, "RUNNING")) {
      reply(tx, m, ReplyClass.SUCCESS.name(), null, read(c, cmd, SagaHeaders.COMPENSATE).reply());
      return ParticipantOutcome.REPLAYED;
    }
    // the barrier: a forward row inserted now means the forward work never ran here, and never will
    boolean forwardRan = !insert(c, cmd, SagaHeaders.FORWARD, "PREVENTED")
        && ReplyClass.SUCCESS.name().equals(read(c, cmd, SagaHeaders.FORWARD).outcome());
    if (forwardRan && undo == null) {
      return noUndo(tx, c, start, m, cmd);
    }
    if (!forwardRan) {
      set(c, cmd, SagaHeaders.COMPENSATE, "EMPTY", NONE);
      reply(tx, m, ReplyClass.SUCCESS.name(), "EMPTY", NONE);
      log.debug("Participant '{}': compensation of saga {} step '{}' is empty", participant, cmd.sagaId(),
          cmd.step());
      return ParticipantOutcome.COMPENSATED_EMPTY;
    }
    try {
      byte[] out = undo.run(c, m);
      set(c, cmd, SagaHeaders.COMPENSATE, ReplyClass.SUCCESS.name(), out);
      reply(tx, m, ReplyClass.SUCCESS.name(), null, out);
      return ParticipantOutcome.COMPENSATED;
    } catch (Exception e) {
      return failed(tx, c, start, m, cmd, e);
    }
  }

  /**
   * The forward work ran here and nothing can undo it: an "empty" success would claim money returned that was not.
   * A money anomaly instead (the coordinator stops the saga with a ticket, and sends nothing more for it). Nothing
   * is stored (the claim row rolls back): the barrier keeps no record of an undo that did not run.
   */
  private ParticipantOutcome noUndo(TxnContext tx, Connection c, Savepoint start, IncomingMessage m, Command cmd)
      throws SQLException {
    c.rollback(start);
    String why = "participant '" + participant + "' has no compensation for step '" + cmd.step()
        + "', but its forward work ran: nothing was undone";
    log.error("Saga {}: {}; replied ANOMALY ({})", cmd.sagaId(), why, NO_UNDO);
    reply(tx, m, ReplyClass.ANOMALY.name(), NO_UNDO, why.getBytes(StandardCharsets.UTF_8));
    return ParticipantOutcome.NO_UNDO;
  }

  /** Nothing is kept (the claim rows roll back with the work): the coordinator asks again with a new attempt. */
  private ParticipantOutcome failed(TxnContext tx, Connection c, Savepoint start, IncomingMessage m, Command cmd,
      Exception e) throws SQLException {
    c.rollback(start);
    log.warn("Participant '{}': {} of saga {} step '{}' failed; replied TECHNICAL_FAILURE", participant,
        cmd.direction(), cmd.sagaId(), cmd.step(), e);
    // the exception's class only: its message may quote data or SQL, and the reply leaves this service (the log has it)
    String what = "the participant's work failed with " + e.getClass().getName() + "; its log has the cause";
    reply(tx, m, ReplyClass.TECHNICAL_FAILURE.name(), null, what.getBytes(StandardCharsets.UTF_8));
    return ParticipantOutcome.FAILED;
  }

  private void reply(TxnContext tx, IncomingMessage m, String outcome, String reason, byte[] payload) {
    // RocketMQ refuses an empty body: an empty reply travels as an empty JSON object
    OutgoingMessage.Builder b = OutgoingMessage.builder(m.header(SagaHeaders.REPLY_TO))
        .key(m.header(SagaHeaders.SAGA_ID)).tenant(m.tenant()).payload(payload.length == 0 ? EMPTY_JSON : payload);
    for (String h : new String[]{SagaHeaders.SAGA_ID, SagaHeaders.STEP, SagaHeaders.ATTEMPT, SagaHeaders.DIRECTION,
        SagaHeaders.COMMAND_ID}) {
      if (m.header(h) != null) {
        b.header(h, m.header(h));
      }
    }
    b.header(SagaHeaders.OUTCOME, outcome);
    if (reason != null) {
      b.header(SagaHeaders.REASON, reason);
    }
    tx.publish(b.build());
  }

  private boolean insert(Connection c, Command cmd, String direction, String outcome) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT)) {
      ps.setString(1, participant);
      ps.setString(2, cmd.sagaId());
      ps.setString(3, cmd.step());
      ps.setString(4, direction);
      ps.setString(5, outcome);
      ps.setString(6, cmd.commandId());
      ps.setBytes(7, NONE);
      return ps.executeUpdate() == 1;
    }
  }

  private Stored read(Connection c, Command cmd, String direction) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(READ)) {
      bindKey(ps, 1, cmd, direction);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Stored(rs.getString(1), rs.getBytes(2));
      }
    }
  }

  private void set(Connection c, Command cmd, String direction, String outcome, byte[] reply) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SET)) {
      ps.setString(1, outcome);
      ps.setBytes(2, reply);
      bindKey(ps, 3, cmd, direction);
      ps.executeUpdate();
    }
  }

  private void bindKey(PreparedStatement ps, int from, Command cmd, String direction) throws SQLException {
    ps.setString(from, participant);
    ps.setString(from + 1, cmd.sagaId());
    ps.setString(from + 2, cmd.step());
    ps.setString(from + 3, direction);
  }
}
