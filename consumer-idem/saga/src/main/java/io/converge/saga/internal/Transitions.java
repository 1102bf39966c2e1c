package io.converge.saga.internal;

import io.converge.consumer.BusinessException;
import io.converge.core.tracing.MessageSpan;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnContext;
import io.converge.saga.SagaBranchRetention;
import io.converge.saga.SagaDefinition;
import io.converge.saga.SagaHeaders;
import io.converge.saga.SagaMetrics;
import io.converge.saga.SagaState;
import io.converge.saga.SagaStep;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The forward and compensating moves of a saga. Each public entry runs inside one unit of work (its
 * {@link TxnContext}), on a saga row it holds locked, and ends with exactly one compare-and-swap update of that row
 * and at most one command: state, command and events commit together or not at all. Thread-safe (stateless apart
 * from the rate limits).
 */
final class Transitions {

  private static final Logger log = LoggerFactory.getLogger(Transitions.class);

  private final String replyTopic;
  private final Clock clock;
  private final SagaMetrics metrics;
  private final RateLimits limits;
  private final SagaBranchRetention participantRetention;
  private final SagaSpans spans;

  Transitions(String replyTopic, Clock clock, SagaMetrics metrics, RateLimits limits,
      SagaBranchRetention participantRetention, SagaSpans spans) {
    this.spans = spans;
    this.replyTopic = replyTopic;
    this.clock = clock;
    this.metrics = metrics;
    this.limits = limits;
    this.participantRetention = participantRetention;
  }

  Instant now() {
    return clock.instant();
  }

  /** Runs the steps from {@code from} on: local ones here, up to the first remote one, whose command it sends. */
  <D> void forward(TxnContext tx, SagaDefinition<D> def, SagaRow before, SagaRow row, int from, D data)
      throws Exception {
    Connection c = tx.connection();
    for (int i = from; i < def.steps().size(); i++) {
      SagaStep<D> s = def.step(i);
      if (s.kind() == SagaStep.Kind.REMOTE) {
        sendForward(tx, def, before, row.at(SagaState.RUNNING, i).withData(def.codec().encode(data)), 1, 1, "SENT",
            data);
        return;
      }
      Savepoint sp = c.setSavepoint();
      try {
        D in = data;
        data = runTraced(spans.step(row, s.name(), 1, SagaHeaders.FORWARD, "LOCAL_DONE"), () -> s.action().run(c, in));
        event(c, row, s.name(), 1, "LOCAL_DONE", null, null);
      } catch (BusinessException e) {
        c.rollback(sp);
        event(c, row, s.name(), 1, "FAILED", null, e.getMessage());
        compensate(tx, def, before, row.withData(def.codec().encode(data)).at(SagaState.COMPENSATING, i), i - 1,
            data);
        return;
      }
    }
    SagaRow done = SagaStore.update(c, before, row.withData(def.codec().encode(data)).finished(SagaState.COMPLETED,
        null), null, now());
    event(c, done, null, null, "COMPLETED", null, null);
    metrics.ended(def.name(), SagaState.COMPLETED);
    log.debug("Saga {} completed", done.id());
  }

  /** Sends a forward command of the step {@code row} is at (attempt, and sends counted in all). */
  <D> void sendForward(TxnContext tx, SagaDefinition<D> def, SagaRow before, SagaRow row, int attempt, int sends,
      String kind, D data) throws SQLException {
    SagaStep<D> s = def.step(row.step());
    Instant now = now();
    if (pastParticipantRetention(tx, def, before, row, s, now)) {
      return;
    }
    // a Confirm is asked until it succeeds: the global timeout is no longer the saga's limit
    Instant next = s.confirm() ? now.plus(s.timeout()) : min(now.plus(s.timeout()), row.deadline());
    if (s.overHttp() && !HttpBranches.collecting()) {
      SagaStore.update(tx.connection(), before, row.pending(attempt, row.failures(), now, row.lastError()), s.name(),
          now); // no call can follow this unit of work's commit here: the next poll makes it
      return;
    }
    SagaRow saved = SagaStore.update(tx.connection(), before, row.sent(attempt, sends, next), s.name(), now);
    String id = null;
    if (s.overHttp()) {
      call(saved, s, attempt, SagaHeaders.FORWARD, s.command(data)); // its span is the call's (after the commit)
    } else {
      id = publish(tx, saved, s, attempt, SagaHeaders.FORWARD, kind, Commands.command(s.commandTopic(), saved, s,
          attempt, SagaHeaders.FORWARD, saved.version(), replyTopic, s.command(data)));
    }
    event(tx.connection(), saved, s.name(), attempt, kind, id, null);
  }

  private static void call(SagaRow saga, SagaStep<?> s, int attempt, String direction, byte[] payload) {
    HttpBranches.add(new HttpBranches.Call(saga.id(), saga.tenant(), s.name(), s.branch(), attempt, direction,
        Commands.operation(s, direction), s.url(Commands.operation(s, direction)), payload, s.timeout(),
        saga.trace()));
  }

  /**
   * Publishes a command of {@code saga}'s step under a {@code saga step} span, a child of the saga's stored trace
   * context: the command's creation context is in the saga's trace whoever sends it, however late.
   */
  private String publish(TxnContext tx, SagaRow saga, SagaStep<?> s, int attempt, String direction, String kind,
      OutgoingMessage command) {
    return runTraced(spans.step(saga, s.name(), attempt, direction, kind), () -> tx.publish(command));
  }

  /** Work run under a span. */
  @FunctionalInterface
  private interface Traced<T, E extends Exception> {

    T run() throws E;
  }

  /**
   * Runs {@code work} under {@code span}, then closes it: what the work throws is recorded on the span while it is
   * still open (status error, the exception as an event), then rethrown unchanged.
   */
  private static <T, E extends Exception> T runTraced(MessageSpan span, Traced<T, E> work) throws E {
    try (span) {
      try {
        return work.run();
      } catch (Exception e) {
        span.failed(e);
        throw e;
      }
    }
  }

  /**
   * Compensates, last first, the compensable steps from index {@code from} down: local ones here, up to the first
   * remote one, whose compensation it sends (or schedules, when its participant's rate limit says wait). A TCC
   * Confirm step reached on the way down (a step of a mixed saga, after it) succeeded: its branch is confirmed, the
   * money moved, and its Try's Cancel would be refused by the branch's barrier. The walk stops there
   * ({@link #stopAtConfirm}): nothing below it is compensated, the saga is {@code STOPPED} with a ticket.
   */
  <D> void compensate(TxnContext tx, SagaDefinition<D> def, SagaRow before, SagaRow row, int from, D data)
      throws SQLException {
    Connection c = tx.connection();
    if (row.state() != SagaState.COMPENSATING) {
      event(c, row, null, null, "COMPENSATING", null, null);
    }
    for (int j = from; j >= 0; j--) {
      SagaStep<D> s = def.step(j);
      if (s.confirm()) {
        stopAtConfirm(c, def, before, row.at(SagaState.COMPENSATING, j));
        return;
      }
      if (!s.compensable()) {
        continue;
      }
      SagaRow at = row.at(SagaState.COMPENSATING, j);
      if (s.kind() == SagaStep.Kind.REMOTE) {
        sendCompensation(tx, def, before, at.pending(1, 0, now(), row.lastError()), 1, data);
        return;
      }
      if (!undoLocal(tx, def, before, at, 0, data)) {
        return;
      }
    }
    SagaRow done = SagaStore.update(c, before, row.finished(SagaState.COMPENSATED, row.lastError()), null, now());
    event(c, done, null, null, "COMPENSATED", null, null);
    metrics.ended(def.name(), SagaState.COMPENSATED);
    log.info("Saga {} compensated", done.id());
  }

  /**
   * The compensation of a mixed saga reached the Confirm step {@code at} is at: its branch is confirmed (a Confirm
   * is asked until it succeeds, and compensation begins only after it), so the Try is not cancelled and the steps
   * before it are not compensated: undoing them around a confirmed debit would leave the books half undone. The
   * saga is {@code STOPPED} with an {@code ANOMALY} ticket naming the branch and the steps left as they are: a
   * person decides (refund, or finish the saga's work by hand).
   */
  private <D> void stopAtConfirm(Connection c, SagaDefinition<D> def, SagaRow before, SagaRow at)
      throws SQLException {
    SagaStep<D> s = def.step(at.step());
    StringBuilder left = new StringBuilder();
    for (int j = at.step() - 1; j >= 0; j--) {
      if (def.step(j).compensable()) {
        left.append(left.length() == 0 ? "" : ", ").append(def.step(j).name());
      }
    }
    String why = "compensation reached step '" + s.name() + "', the Confirm of TCC branch '" + s.branch()
        + "', which succeeded: the branch is confirmed (its Try's Cancel is not sent) and the steps before it are"
        + " not compensated (" + (left.length() == 0 ? "none" : left) + "); last error: "
        + (at.lastError() == null ? "unknown" : at.lastError());
    Instant now = now();
    SagaRow saved = SagaStore.update(c, before, at.finished(SagaState.STOPPED, why), null, now);
    event(c, saved, s.name(), null, "STOPPED", null, why);
    SagaStore.ticket(c, saved, s.name(), "ANOMALY", why, now);
    event(c, saved, s.name(), null, "TICKET", null, why);
    metrics.ended(def.name(), SagaState.STOPPED);
    log.warn("Saga {} stopped at the confirmed step '{}' of branch '{}': {} (ticket opened)", saved.id(), s.name(),
        s.branch(), why);
  }

  /** Runs a local step's compensation; false when it failed (then the saga is updated to retry or to a ticket). */
  <D> boolean undoLocal(TxnContext tx, SagaDefinition<D> def, SagaRow before, SagaRow at, int failures, D data)
      throws SQLException {
    Connection c = tx.connection();
    SagaStep<D> s = def.step(at.step());
    Savepoint sp = c.setSavepoint();
    try {
      runTraced(spans.step(at, s.name(), failures + 1, SagaHeaders.COMPENSATE, "COMPENSATED"),
          () -> s.undo().run(c, data));
      event(c, at, s.name(), failures + 1, "COMPENSATED", null, null);
      return true;
    } catch (Exception e) {
      c.rollback(sp);
      compensationFailed(tx, def, before, at, failures + 1, e.toString());
      return false;
    }
  }

  /**
   * Sends the compensation the row is at (attempt {@code attempt}), when the participant's rate limit gives a token;
   * else schedules the send for when it will.
   */
  <D> void sendCompensation(TxnContext tx, SagaDefinition<D> def, SagaRow before, SagaRow row, int attempt, D data)
      throws SQLException {
    SagaStep<D> s = def.step(row.step());
    Instant now = now();
    if (pastParticipantRetention(tx, def, before, row, s, now)) {
      return;
    }
    long waitNanos = limits.tryAcquire(s.participant());
    if (waitNanos > 0) {
      metrics.compensationDelayed(s.participant());
      SagaStore.update(tx.connection(), before, row.pending(attempt, row.failures(), now.plusNanos(waitNanos),
          row.lastError()), s.name(), now);
      return;
    }
    if (s.overHttp() && !HttpBranches.collecting()) {
      SagaStore.update(tx.connection(), before, row.pending(attempt, row.failures(), now, row.lastError()), s.name(),
          now); // the next poll makes the call
      return;
    }
    Duration timeout = s.branch() != null ? s.timeout() : def.compensationTimeout(); // a Cancel: its branch's
    SagaRow saved = SagaStore.update(tx.connection(), before, row.sent(attempt, row.sends() + 1, now.plus(timeout)),
        s.name(), now);
    String id = null;
    if (s.overHttp()) {
      call(saved, s, attempt, SagaHeaders.COMPENSATE, s.compensation(data));
    } else {
      id = publish(tx, saved, s, attempt, SagaHeaders.COMPENSATE, "COMPENSATION_SENT",
          Commands.command(s.compensationTopic(), saved, s, attempt, SagaHeaders.COMPENSATE, saved.version(),
              replyTopic, s.compensation(data)));
    }
    event(tx.connection(), saved, s.name(), attempt, "COMPENSATION_SENT", id, null);
    metrics.compensationSent(s.participant());
  }

  /**
   * Counts a failed compensation: a new attempt after a backoff, or, at the definition's limit, the end of
   * automation: {@code COMPENSATION_FAILED} and a ticket. The Cancel of a TCC branch (of a {@code TccDefinition}, or
   * a mixed saga's Try step) is never given up: {@link #tccFailed}.
   */
  <D> void compensationFailed(TxnContext tx, SagaDefinition<D> def, SagaRow before, SagaRow row, int failures,
      String reason) throws SQLException {
    Connection c = tx.connection();
    SagaStep<D> s = def.step(row.step());
    Instant now = now();
    if (def.tcc() || s.branch() != null) { // a Cancel, of a TCC or of a mixed saga's Try: asked until it succeeds
      tccFailed(tx, def, before, row, failures, reason);
      return;
    }
    if (failures < def.compensationAttempts()) {
      SagaRow saved = SagaStore.update(c, before,
          row.pending(row.attempt() + 1, failures, now.plus(backoff(s, failures)), reason), s.name(), now);
      event(c, saved, s.name(), row.attempt(), "COMPENSATION_RETRIED", null, reason);
      return;
    }
    String why = "compensation of step '" + s.name() + "' failed " + failures + " times; last: " + reason;
    SagaRow saved = SagaStore.update(c, before, row.finished(SagaState.COMPENSATION_FAILED, why), null, now);
    event(c, saved, s.name(), row.attempt(), "COMPENSATION_FAILED", null, reason);
    SagaStore.ticket(c, saved, s.name(), "COMPENSATION_FAILED", why, now);
    event(c, saved, s.name(), null, "TICKET", null, why);
    metrics.ended(def.name(), SagaState.COMPENSATION_FAILED);
    log.warn("Saga {} needs a person: {} (ticket opened)", saved.id(), why);
  }

  /**
   * A successful compensation reply for the step whose failed compensation ended automation (its timeouts counted
   * as failures, but the participant did undo it): recorded on the timeline ({@code COMPENSATION_REPLIED},
   * {@code COMPENSATED}, {@code TICKET_NOTED}) and appended to the ticket's reason with the steps still to
   * compensate, so the person on the ticket sees the money was returned. When no ticket of it is open any more
   * (a person resolved it, perhaps by undoing the step by hand), a new {@code ANOMALY} ticket is opened instead: the
   * step may have been undone twice. The saga stays {@code COMPENSATION_FAILED} (final). No row update: nothing is
   * sent.
   *
   * @return false when that step's compensation was recorded before (the reply is then a duplicate)
   */
  <D> boolean compensatedLate(Connection c, SagaDefinition<D> def, SagaRow row, int attempt, String messageId,
      String note) throws SQLException {
    SagaStep<D> s = def.step(row.step());
    if (SagaStore.recordedBefore(c, row.id(), s.name(), "COMPENSATED")) {
      return false;
    }
    StringBuilder left = new StringBuilder();
    for (int j = row.step() - 1; j >= 0; j--) {
      if (def.step(j).compensable()) {
        left.append(left.length() == 0 ? "" : ", ").append(def.step(j).name());
      }
    }
    Instant now = now();
    String text = now + ": the compensation of step '" + s.name() + "' (attempt " + attempt
        + ") was replied SUCCESS after the saga's COMPENSATION_FAILED: it was undone; steps still to compensate: "
        + (left.length() == 0 ? "none (the saga is compensated in fact)" : left);
    event(c, row, s.name(), attempt, "COMPENSATION_REPLIED", messageId, note);
    event(c, row, s.name(), attempt, "COMPENSATED", null, "late, after COMPENSATION_FAILED");
    int tickets = SagaStore.noteTicket(c, row, s.name(), "COMPENSATION_FAILED", text);
    if (tickets > 0) {
      event(c, row, s.name(), null, "TICKET_NOTED", null, text);
      log.warn("Saga {} (COMPENSATION_FAILED): {}; noted on {} ticket(s)", row.id(), text, tickets);
      return true;
    }
    // the ticket was resolved already: a person may have undone the step by hand too, so the money may have gone
    // back twice; that needs a person again, on a ticket of its own (a note on a resolved ticket is read by nobody)
    String anomaly = text + "; its ticket was resolved before this reply: if the step was also undone by hand, it"
        + " was undone twice";
    SagaStore.ticket(c, row, s.name(), "ANOMALY", anomaly, now);
    event(c, row, s.name(), null, "TICKET", null, anomaly);
    log.error("Saga {} (COMPENSATION_FAILED, ticket resolved): {}; a new ANOMALY ticket is open", row.id(), anomaly);
    return true;
  }

  /**
   * A failed Confirm or Cancel of a TCC branch (a failure answer, or no answer in time): asked again with a new
   * attempt after its branch's backoff, for as long as it takes (the participant promised at Try that both can
   * succeed); the {@link SagaDefinition#compensationAttempts()}-th failure in a row opens a ticket (kind
   * {@code CONFIRM_FAILING} or {@code CANCEL_FAILING}) and the asking goes on.
   */
  <D> void tccFailed(TxnContext tx, SagaDefinition<D> def, SagaRow before, SagaRow row, int failures, String reason)
      throws SQLException {
    Connection c = tx.connection();
    SagaStep<D> s = def.step(row.step());
    Instant now = now();
    boolean confirm = row.state() == SagaState.RUNNING;
    SagaRow saved = SagaStore.update(c, before,
        row.pending(row.attempt() + 1, failures, now.plus(backoff(s, failures)), reason), s.name(), now);
    event(c, saved, s.name(), row.attempt(), confirm ? "RETRIED" : "COMPENSATION_RETRIED", null, reason);
    if (failures == def.compensationAttempts()) {
      String kind = confirm ? "CONFIRM_FAILING" : "CANCEL_FAILING";
      String why = (confirm ? "Confirm" : "Cancel") + " of branch '" + s.branch() + "' failed " + failures
          + " times in a row; still asked (a new attempt after each backoff); last: " + reason;
      ticket(c, saved, s.name(), kind, why);
    }
  }

  /** Opens a ticket of {@code kind} for {@code saga} (which goes on): a {@code TICKET} event and a warning. */
  void ticket(Connection c, SagaRow saga, String step, String kind, String why) throws SQLException {
    SagaStore.ticket(c, saga, step, kind, why, now());
    event(c, saga, step, null, "TICKET", null, why);
    log.warn("Saga {} needs a person: {} (ticket {} opened)", saga.id(), why, kind);
  }

  /**
   * A Confirm or Cancel of a TCC branch that succeeded after its failures opened a ticket: the success is noted on
   * the ticket ({@code TICKET_NOTED}); the ticket stays open for the person to resolve.
   */
  <D> void tccSucceeded(Connection c, SagaDefinition<D> def, SagaRow row, String step) throws SQLException {
    if (row.failures() < def.compensationAttempts()) {
      return;
    }
    boolean confirm = row.state() == SagaState.RUNNING;
    String text = now() + ": the " + (confirm ? "Confirm" : "Cancel") + " of step '" + step + "' succeeded (attempt "
        + row.attempt() + ", after " + row.failures() + " failures)";
    int tickets = SagaStore.noteTicket(c, row, step, confirm ? "CONFIRM_FAILING" : "CANCEL_FAILING", text);
    if (tickets > 0) {
      event(c, row, step, row.attempt(), "TICKET_NOTED", null, text);
      log.info("TCC {}: {}; noted on {} ticket(s)", row.id(), text, tickets);
    }
  }

  /**
   * The send guard of the participants' retention ({@link SagaBranchRetention}): a command of a saga step (a
   * {@code SagaParticipant}'s, not a TCC branch's, whose barrier keeps an unfinished branch's rows) is sent only while
   * the saga is younger than the participants' retention less its send margin. An older saga's step rows may be purged
   * at the participant: its compensation would find nothing to undo (money kept), its forward command would run
   * again. Instead the saga ends ({@code STOPPED} going forward, {@code COMPENSATION_FAILED} compensating) with a
   * {@code RETENTION} ticket: a person checks the step and undoes it by hand. True when the saga was ended.
   */
  private <D> boolean pastParticipantRetention(TxnContext tx, SagaDefinition<D> def, SagaRow before, SagaRow row,
      SagaStep<D> s, Instant now) throws SQLException {
    if (!s.boundByRetention() || participantRetention.maySend(row.createdAt(), now)) {
      return false;
    }
    boolean compensating = row.state() == SagaState.COMPENSATING;
    String why = "saga is " + Duration.between(row.createdAt(), now) + " old, past the " + participantRetention
        .sendHorizon() + " in which participant '" + s.participant() + "' still keeps the rows of step '" + s.name()
        + "' (converge.saga.participant-retention less the send margin): its " + (compensating
            ? "compensation could find its forward row purged and undo nothing"
            : "command could run twice")
        + "; nothing sent, check the step and undo it by hand";
    SagaState end = compensating ? SagaState.COMPENSATION_FAILED : SagaState.STOPPED;
    Connection c = tx.connection();
    SagaRow saved = SagaStore.update(c, before, row.finished(end, why), null, now);
    event(c, saved, s.name(), row.attempt(), "RETENTION_EXCEEDED", null, why);
    SagaStore.ticket(c, saved, s.name(), "RETENTION", why, now);
    event(c, saved, s.name(), null, "TICKET", null, why);
    metrics.ended(def.name(), end);
    log.error("Saga {} needs a person: {} (ticket opened)", saved.id(), why);
    return true;
  }

  /** Stops the saga where it is (a money anomaly) with a ticket. */
  <D> void stop(TxnContext tx, SagaDefinition<D> def, SagaRow before, String step, String reason) throws SQLException {
    Connection c = tx.connection();
    Instant now = now();
    SagaRow saved = SagaStore.update(c, before, before.finished(SagaState.STOPPED, reason), null, now);
    event(c, saved, step, before.attempt(), "STOPPED", null, reason);
    SagaStore.ticket(c, saved, step, "ANOMALY", reason, now);
    event(c, saved, step, null, "TICKET", null, reason);
    metrics.ended(def.name(), SagaState.STOPPED);
    log.warn("Saga {} stopped at step '{}' on an anomaly: {} (ticket opened)", saved.id(), step, reason);
  }

  void event(Connection c, SagaRow saga, String step, Integer attempt, String kind, String messageId, String payload)
      throws SQLException {
    SagaStore.event(c, saga.id(), step, attempt, kind, messageId, payload, now());
  }

  /** The wait before a new attempt: the step's retry policy, or for a local step the default one. */
  static java.time.Duration backoff(SagaStep<?> s, int failures) {
    return (s.retry() != null ? s.retry() : io.converge.saga.RetryPolicy.defaults()).backoff(failures);
  }

  static Instant min(Instant a, Instant b) {
    return a.isBefore(b) ? a : b;
  }
}
