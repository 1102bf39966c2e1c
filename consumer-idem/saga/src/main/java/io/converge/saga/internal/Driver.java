package io.converge.saga.internal;

import io.converge.core.internal.Text;
import io.converge.consumer.BusinessException;
import io.converge.consumer.IncomingMessage;
import io.converge.core.tracing.MessageSpan;
import io.converge.producer.TxnContext;
import io.converge.saga.ReplyClass;
import io.converge.saga.ReplyClassifier;
import io.converge.saga.SagaDefinition;
import io.converge.saga.SagaException;
import io.converge.saga.SagaHeaders;
import io.converge.saga.SagaMetrics;
import io.converge.saga.SagaReply;
import io.converge.saga.SagaState;
import io.converge.saga.SagaStep;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a due saga and a reply do: the decisions of the coordinator, each made inside the caller's unit of work on a
 * saga row it holds locked, carried out by {@link Transitions}. A TCC global transaction (a saga of
 * {@link SagaDefinition#tcc()} shape) follows the same rules for its Try steps, except that a refused Try is
 * cancelled too; its Confirm steps ignore the deadline, and its Confirms and Cancels are asked until they succeed
 * ({@link Transitions#tccFailed}). Thread-safe (stateless).
 */
final class Driver {

  private static final Logger log = LoggerFactory.getLogger(Driver.class);

  private final Map<String, SagaDefinition<?>> definitions;
  private final Transitions moves;
  private final SagaMetrics metrics;
  private final SagaSpans spans;

  Driver(Map<String, SagaDefinition<?>> definitions, Transitions moves, SagaMetrics metrics, SagaSpans spans) {
    this.spans = spans;
    this.definitions = definitions;
    this.moves = moves;
    this.metrics = metrics;
  }

  @SuppressWarnings("unchecked")
  SagaDefinition<Object> definition(SagaRow row) {
    SagaDefinition<Object> def = (SagaDefinition<Object>) definitions.get(row.definition());
    if (def == null) {
      throw new SagaException("Saga " + row.id() + " is of definition '" + row.definition()
          + "', which this coordinator does not know", row.id());
    }
    return def;
  }

  /** A due saga: a reply's timeout, a pending send, or its deadline. */
  void due(TxnContext tx, SagaRow row) throws Exception {
    SagaDefinition<Object> def = definition(row);
    Object data = def.codec().decode(row.data());
    SagaStep<Object> s = def.step(row.step());
    Instant now = moves.now();
    if (row.state() == SagaState.RUNNING) {
      if (!s.confirm() && !now.isBefore(row.deadline())) {
        moves.event(tx.connection(), row, s.name(), row.attempt(), "DEADLINE", null, null);
        // a step whose command went out may have happened: it is compensated too (its participant's barrier
        // turns a compensation of nothing into an empty one)
        moves.compensate(tx, def, row, row, row.sends() > 0 ? row.step() : row.step() - 1, data);
      } else if (!row.awaiting()) {
        moves.sendForward(tx, def, row, row, row.attempt(), row.sends() + 1, "SENT", data);
      } else {
        moves.event(tx.connection(), row, s.name(), row.attempt(), "TIMED_OUT", null, null);
        if (s.confirm()) {
          moves.tccFailed(tx, def, row, row, row.failures() + 1, "no answer after " + s.timeout());
        } else if (row.sends() < s.retry().maxAttempts()) {
          // outcome unknown: ask again with the same command id; the participant answers with its stored reply
          moves.sendForward(tx, def, row, row, row.attempt(), row.sends() + 1, "RESENT", data);
        } else {
          SagaStore.update(tx.connection(), row, row.pending(row.attempt(), row.failures(), row.deadline(),
              "no reply after " + row.sends() + " sends; waiting for a reply or the deadline").sent(row.attempt(),
                  row.sends(), row.deadline()),
              s.name(), now);
        }
      }
      return;
    }
    if (s.kind() == SagaStep.Kind.LOCAL) {
      if (moves.undoLocal(tx, def, row, row, row.failures(), data)) {
        moves.compensate(tx, def, row, row, row.step() - 1, data);
      }
    } else if (!row.awaiting()) {
      moves.sendCompensation(tx, def, row, row, row.attempt(), data);
    } else {
      moves.event(tx.connection(), row, s.name(), row.attempt(), "TIMED_OUT", null, null);
      int failures = row.failures() + 1;
      if (def.tcc() || s.branch() != null) { // a TCC branch's Cancel: a new attempt after its backoff, for ever
        moves.tccFailed(tx, def, row, row, failures, "no answer after " + s.timeout());
      } else if (failures >= def.compensationAttempts()) {
        moves.compensationFailed(tx, def, row, row, failures, "no reply after " + row.sends() + " sends");
      } else {
        moves.sendCompensation(tx, def, row, row.pending(row.attempt(), failures, now, "no reply"), row.attempt(),
            data);
      }
    }
  }

  /**
   * A compensation that succeeded for a saga no longer there (purged): a command parked in a participant's dead-letter
   * queue and re-driven after the retention. Had the saga been kept, its step may have been undone already (or by
   * hand): the money may have gone back twice, so a person must look, on an {@code ANOMALY} ticket of its own (the
   * ticket table needs no saga row; the tenant is the reply's).
   */
  private void compensatedAfterPurge(Connection c, String id, String tenant, String step, String note)
      throws Exception {
    String reason = "a compensation of step '" + step + "' succeeded after its saga was purged (a command re-driven"
        + " late, e.g. from a dead-letter queue): if the step had been undone already, it was undone twice; " + note;
    SagaStore.orphanTicket(c, id, tenant, step, "ANOMALY", reason, moves.now());
    metrics.compensationAfterPurge(step);
    log.error("Saga {} (purged): {}; an ANOMALY ticket is open", id, reason);
  }

  /** Applies the reply {@code m} (of a participant, or the answer of an HTTP branch) in {@code tx}. */
  void onReply(TxnContext tx, IncomingMessage m) throws Exception {
    String id = m.header(SagaHeaders.SAGA_ID);
    String step = m.header(SagaHeaders.STEP);
    String direction = m.header(SagaHeaders.DIRECTION);
    String attemptText = m.header(SagaHeaders.ATTEMPT);
    if (id == null || step == null || attemptText == null
        || !(SagaHeaders.FORWARD.equals(direction) || SagaHeaders.COMPENSATE.equals(direction))) {
      throw new BusinessException("NOT_A_SAGA_REPLY", "a reply needs the headers " + SagaHeaders.SAGA_ID + ", "
          + SagaHeaders.STEP + ", " + SagaHeaders.ATTEMPT + " and " + SagaHeaders.DIRECTION + ": " + m);
    }
    int attempt = Integer.parseInt(attemptText);
    Connection c = tx.connection();
    String body = new String(m.payload(), StandardCharsets.UTF_8);
    String reason = m.header(SagaHeaders.REASON);
    // bounded: it goes into events, last_error and tickets, on every retry (an answer may be a whole error page)
    String note = note(m.header(SagaHeaders.OUTCOME) + (reason == null ? "" : " " + reason) + " " + body);
    Optional<SagaRow> found = SagaStore.lock(c, id);
    if (found.isEmpty()) {
      SagaStore.event(c, id, step, attempt, "LATE_REPLY", m.envelopeMessageId(), "no such saga; " + note,
          moves.now());
      if (SagaHeaders.COMPENSATE.equals(direction) && ReplyClassifier.byOutcomeHeader()
          .classify(new SagaReply(m.header(SagaHeaders.OUTCOME), m.headers(), m.payload())) == ReplyClass.SUCCESS) {
        compensatedAfterPurge(c, id, m.tenant(), step, note);
      }
      return;
    }
    SagaRow row = found.get();
    // applied under the saga's stored context whatever context the reply carries (a foreign participant's may have
    // none): the reply's application and the command it leads to are the saga's trace
    try (MessageSpan span = spans.step(row, step, attempt, direction,
        SagaHeaders.FORWARD.equals(direction) ? "REPLIED" : "COMPENSATION_REPLIED")) {
      try {
        apply(tx, m, row, step, direction, attempt, note);
      } catch (Exception e) {
        span.failed(e);
        throw e;
      }
    }
  }

  private void apply(TxnContext tx, IncomingMessage m, SagaRow row, String step, String direction, int attempt,
      String note) throws Exception {
    Connection c = tx.connection();
    String id = row.id();
    String reason = m.header(SagaHeaders.REASON);
    SagaDefinition<Object> def = definition(row);
    boolean forward = SagaHeaders.FORWARD.equals(direction);
    int index = indexOf(def, step);
    String replied = forward ? "REPLIED" : "COMPENSATION_REPLIED";
    boolean current = row.awaiting() && row.step() == index && row.attempt() == attempt
        && row.state() == (forward ? SagaState.RUNNING : SagaState.COMPENSATING);
    SagaReply reply = new SagaReply(m.header(SagaHeaders.OUTCOME), m.headers(), m.payload());
    if (!current && !forward && row.state() == SagaState.COMPENSATION_FAILED && row.step() == index
        && ReplyClassifier.byOutcomeHeader().classify(reply) == ReplyClass.SUCCESS
        && moves.compensatedLate(c, def, row, attempt, m.envelopeMessageId(), note)) {
      return;
    }
    if (!current) {
      String kind = SagaStore.repliedBefore(c, id, step, attempt, replied) ? "DUPLICATE_REPLY" : "LATE_REPLY";
      moves.event(c, row, step, attempt, kind, m.envelopeMessageId(), direction + " " + note);
      metrics.replyIgnored(def.name(), kind);
      log.info("Saga {}: {} for step '{}' attempt {} ({}) ignored; the saga is {} at step {} attempt {}", id, kind,
          step, attempt, direction, row.state(), row.step(), row.attempt());
      return;
    }
    moves.event(c, row, step, attempt, replied, m.envelopeMessageId(), note);
    if (metrics != SagaMetrics.NONE) {
      Instant sent = SagaStore.firstSent(c, id, step, attempt, forward ? "SENT" : "COMPENSATION_SENT");
      if (sent != null) {
        metrics.stepReplied(def.name(), step, direction, Duration.between(sent, moves.now()));
      }
    }
    Object data = def.codec().decode(row.data());
    SagaStep<Object> s = def.step(index);
    if (!forward) {
      compensationReplied(tx, def, row, s, attempt, reply, note, data);
      return;
    }
    ReplyClass kind = s.classifier().classify(reply);
    if (s.confirm() && kind != ReplyClass.SUCCESS && kind != ReplyClass.TECHNICAL_FAILURE) {
      kind = ReplyClass.ANOMALY; // a refused Confirm breaks the TCC contract: a person must look
    }
    switch (kind) {
      case SUCCESS -> {
        if (s.confirm()) {
          moves.tccSucceeded(c, def, row, step);
        }
        Object next = s.onSuccess(data, reply);
        moves.forward(tx, def, row, row.withData(def.codec().encode(next)), index + 1, next);
      }
      case BUSINESS_FAILURE -> {
        moves.event(c, row, step, attempt, "FAILED", null, note);
        // a refused Try is cancelled too: whatever it may have left, its participant's barrier answers the Cancel
        moves.compensate(tx, def, row, row.pending(row.attempt(), row.failures(), moves.now(), note),
            def.tcc() ? index : index - 1, data);
      }
      case TECHNICAL_FAILURE -> {
        Instant now = moves.now();
        if (s.confirm()) {
          moves.tccFailed(tx, def, row, row, row.failures() + 1, note);
        } else if (row.sends() < s.retry().maxAttempts()) {
          SagaRow saved = SagaStore.update(c, row, row.pending(row.attempt() + 1, row.failures(),
              Transitions.min(now.plus(Transitions.backoff(s, row.sends())), row.deadline()), note), step, now);
          moves.event(c, saved, step, attempt, "RETRIED", null, null);
        } else {
          SagaRow saved = SagaStore.update(c, row, row.pending(row.attempt(), row.failures(), row.deadline(), note)
              .sent(row.attempt(), row.sends(), row.deadline()), step, now);
          if (HttpBranches.MISCONFIGURED.equals(reason)) { // asking again will not help: a person must look
            moves.ticket(c, saved, step, HttpBranches.MISCONFIGURED, "the Try of branch '" + s.branch() + "' was"
                + " answered outside the protocol " + row.sends() + " times; it waits for the global timeout and is"
                + " cancelled then; last: " + note);
          }
        }
      }
      case ANOMALY -> moves.stop(tx, def, row, step, "anomaly replied to step '" + step + "': " + note);
      default -> throw new IllegalStateException(kind.name());
    }
  }

  private void compensationReplied(TxnContext tx, SagaDefinition<Object> def, SagaRow row, SagaStep<Object> s,
      int attempt, SagaReply reply, String note, Object data) throws Exception {
    Connection c = tx.connection();
    String step = s.name();
    ReplyClass kind = ReplyClassifier.byOutcomeHeader().classify(reply);
    boolean cancel = def.tcc() || s.branch() != null; // a TCC branch's Cancel, in a TCC or in a mixed saga
    if (cancel && kind == ReplyClass.BUSINESS_FAILURE) {
      kind = ReplyClass.ANOMALY; // a refused Cancel breaks the TCC contract
    }
    switch (kind) {
      case SUCCESS -> {
        if (cancel) {
          moves.tccSucceeded(c, def, row, step);
        }
        moves.event(c, row, step, attempt, "COMPENSATED", null, null);
        moves.compensate(tx, def, row, row, row.step() - 1, data);
      }
      // the participant says money is wrong (e.g. its forward work ran and it has no undo): asking again would
      // not help, a person must look
      case ANOMALY -> moves.stop(tx, def, row, step, "anomaly replied to the compensation of step '" + step
          + "': " + note);
      default -> moves.compensationFailed(tx, def, row, row, row.failures() + 1, "participant replied " + note);
    }
  }

  /** At most this many characters of a reply go into an event's payload, {@code last_error} or a ticket. */
  static final int MAX_NOTE = 4096;

  /**
   * {@code text}, cut to {@link #MAX_NOTE} characters (marked as cut), as a text column holds it: foreign text (a
   * participant's reply, an HTTP branch's error page) may carry a NUL, which PostgreSQL refuses, and a cut never splits
   * a surrogate pair ({@link Text#abbreviate}).
   */
  static String note(String text) {
    String kept = Text.abbreviate(text, MAX_NOTE);
    return text.length() <= MAX_NOTE ? kept : kept + " [cut: " + text.length() + " characters in all]";
  }

  private static int indexOf(SagaDefinition<?> def, String step) {
    for (int i = 0; i < def.steps().size(); i++) {
      if (def.step(i).name().equals(step)) {
        return i;
      }
    }
    throw new BusinessException("UNKNOWN_STEP", "saga '" + def.name() + "' has no step '" + step + "'");
  }
}
