package io.converge.saga.tcc.internal;

import io.converge.consumer.BusinessException;
import io.converge.consumer.IncomingMessage;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnContext;
import io.converge.saga.ReplyClass;
import io.converge.saga.SagaHeaders;
import io.converge.saga.tcc.CancelAfterConfirmException;
import io.converge.saga.tcc.ConfirmAfterCancelException;
import io.converge.saga.tcc.ConfirmWithoutTryException;
import io.converge.saga.tcc.TccBarrier;
import io.converge.saga.tcc.TccCall;
import io.converge.saga.tcc.TccHeaders;
import io.converge.saga.tcc.TccOperation;
import io.converge.saga.tcc.TccOutcome;
import io.converge.saga.tcc.TccParticipant;
import io.converge.saga.tcc.TccResult;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A {@link TccParticipant}'s command handling: the barrier around the branch's work, then the reply. Thread-safe. */
public final class TccCommands {

  private static final Logger log = LoggerFactory.getLogger(TccCommands.class);

  private static final String[] COPIED = {SagaHeaders.SAGA_ID, SagaHeaders.STEP, SagaHeaders.ATTEMPT,
      SagaHeaders.DIRECTION, SagaHeaders.COMMAND_ID, TccHeaders.GLOBAL_ID, TccHeaders.BRANCH_ID,
      TccHeaders.OPERATION};
  private static final byte[] EMPTY_JSON = "{}".getBytes(StandardCharsets.UTF_8);

  private final String participant;
  private final TccBarrier barrier;
  private final Map<String, TccParticipant.Branch> branches;
  private final long lockTimeoutMillis;

  /**
   * The commands of {@code participant}'s {@code branches} (by saga step) through {@code barrier}, each unit waiting
   * at most {@code lockTimeout} for a row lock.
   */
  public TccCommands(String participant, TccBarrier barrier, Map<String, TccParticipant.Branch> branches,
      Duration lockTimeout) {
    this.participant = participant;
    this.barrier = barrier;
    this.branches = Map.copyOf(branches);
    this.lockTimeoutMillis = lockTimeout.toMillis();
  }

  /** Handles one command in {@code tx}; returns the class of the reply published. */
  public ReplyClass handle(TxnContext tx, IncomingMessage m) throws Exception {
    TccCall call = call(m);
    // the branch id names the branch whatever saga step carries the call (a TCC transaction's Try and its Confirm
    // are two steps of one branch)
    TccParticipant.Branch branch = branches.get(call.branchId());
    if (branch == null) {
      throw new BusinessException("UNKNOWN_BRANCH", "participant '" + participant + "' serves no TCC branch '"
          + call.branchId() + "'");
    }
    Connection c = tx.connection();
    try (Statement s = c.createStatement()) {
      // a call blocked on a row lock gives up (a technical failure, nothing stored) rather than hold the unit
      s.execute("SET LOCAL lock_timeout = " + lockTimeoutMillis);
    }
    Savepoint start = c.setSavepoint();
    try {
      TccResult r = barrier.run(c, call, conn -> branch.work(call.operation()).run(conn, m));
      if (r.outcome() == TccOutcome.HANGING_REFUSED) {
        reply(tx, m, ReplyClass.BUSINESS_FAILURE, TccOutcome.HANGING_REFUSED.name(), r.outcome(), new byte[0]);
        return ReplyClass.BUSINESS_FAILURE;
      }
      reply(tx, m, ReplyClass.SUCCESS, null, r.outcome(), r.result());
      return ReplyClass.SUCCESS;
    } catch (BusinessException e) {
      c.rollback(start);
      if (call.operation() != TccOperation.TRY) {
        return failed(tx, m, call, e, null);
      }
      log.debug("Participant '{}': the {} refused ({})", participant, call, e.reasonCode());
      reply(tx, m, ReplyClass.BUSINESS_FAILURE, e.reasonCode(), null, bytes(e.getMessage()));
      return ReplyClass.BUSINESS_FAILURE;
    } catch (ConfirmWithoutTryException e) {
      c.rollback(start);
      return failed(tx, m, call, e, ConfirmWithoutTryException.REASON);
    } catch (CancelAfterConfirmException e) {
      c.rollback(start);
      return anomaly(tx, m, call, e, CancelAfterConfirmException.REASON);
    } catch (ConfirmAfterCancelException e) {
      c.rollback(start);
      return anomaly(tx, m, call, e, ConfirmAfterCancelException.REASON);
    } catch (Exception e) {
      // an SQLException of a broken connection fails the rollback too and propagates: the handler retries
      c.rollback(start);
      return failed(tx, m, call, e, null);
    }
  }

  /** Nothing is kept (the barrier rows roll back with the work): the coordinator asks again. */
  private ReplyClass failed(TxnContext tx, IncomingMessage m, TccCall call, Exception e, String reason) {
    log.warn("Participant '{}': the {} failed; replied TECHNICAL_FAILURE", participant, call, e);
    // the exception's class only: its message may quote data or SQL, and the reply leaves this service (the log has it)
    reply(tx, m, ReplyClass.TECHNICAL_FAILURE, reason, null,
        bytes("the " + call.operation() + " failed with " + e.getClass().getName() + "; its log has the cause"));
    return ReplyClass.TECHNICAL_FAILURE;
  }

  /** A Cancel after the Confirm, or the reverse: nothing ran, nothing is kept; the coordinator stops with a ticket. */
  private ReplyClass anomaly(TxnContext tx, IncomingMessage m, TccCall call, Exception e, String reason) {
    log.error("Participant '{}': the {} refused ({}); replied ANOMALY", participant, call, reason, e);
    reply(tx, m, ReplyClass.ANOMALY, reason, null, bytes(e.getMessage()));
    return ReplyClass.ANOMALY;
  }

  private TccCall call(IncomingMessage m) {
    if (m.header(SagaHeaders.SAGA_ID) == null || m.header(SagaHeaders.STEP) == null
        || m.header(SagaHeaders.REPLY_TO) == null) {
      throw new BusinessException("NOT_A_TCC_COMMAND", "participant '" + participant
          + "' got a message without the saga headers: " + m);
    }
    try {
      return new TccCall(m.tenant(), m.header(TccHeaders.GLOBAL_ID), m.header(TccHeaders.BRANCH_ID),
          TccOperation.fromWireName(m.header(TccHeaders.OPERATION)));
    } catch (IllegalArgumentException e) {
      throw new BusinessException("NOT_A_TCC_COMMAND", "participant '" + participant
          + "' got a message with missing or malformed TCC headers: " + e.getMessage(), e);
    }
  }

  private static void reply(TxnContext tx, IncomingMessage m, ReplyClass outcome, String reason, TccOutcome tcc,
      byte[] payload) {
    // RocketMQ refuses an empty body: an empty reply travels as an empty JSON object
    OutgoingMessage.Builder b = OutgoingMessage.builder(m.header(SagaHeaders.REPLY_TO))
        .key(m.header(SagaHeaders.SAGA_ID)).tenant(m.tenant()).payload(payload.length == 0 ? EMPTY_JSON : payload);
    for (String h : COPIED) {
      if (m.header(h) != null) {
        b.header(h, m.header(h));
      }
    }
    b.header(SagaHeaders.OUTCOME, outcome.name());
    if (reason != null) {
      b.header(SagaHeaders.REASON, reason);
    }
    if (tcc != null) {
      b.header(TccHeaders.OUTCOME, tcc.name());
    }
    tx.publish(b.build());
  }

  private static byte[] bytes(String s) {
    return String.valueOf(s).getBytes(StandardCharsets.UTF_8);
  }
}
