package io.converge.saga.internal;

import io.converge.consumer.BusinessException;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.Envelope;
import io.converge.core.internal.DatabaseErrors;
import io.converge.producer.TxnContext;
import io.converge.saga.ReplyClass;
import io.converge.saga.ReplyClassifier;
import io.converge.saga.SagaCoordinator;
import io.converge.saga.SagaCoordinatorBuilder;
import io.converge.saga.SagaDefinition;
import io.converge.saga.SagaException;
import io.converge.saga.SagaHeaders;
import io.converge.saga.SagaReply;
import io.converge.saga.SagaMetrics;
import io.converge.saga.SagaState;
import io.converge.saga.SagaStep;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The coordinator: starts, replies and the recovery poll. Thread-safe. */
public final class DefaultSagaCoordinator implements SagaCoordinator {

  private static final Logger log = LoggerFactory.getLogger(DefaultSagaCoordinator.class);

  private final SagaCoordinatorBuilder.Settings settings;
  private final Transitions moves;
  private final IdempotentHandler replies;
  private ScheduledExecutorService poller;

  /** A coordinator of {@code settings} (validated by the builder). */
  public DefaultSagaCoordinator(SagaCoordinatorBuilder.Settings settings) {
    this.settings = settings;
    this.moves = new Transitions(settings.replyTopic(), settings.clock(), settings.metrics(),
        new RateLimits(settings.compensationRate(), settings.participantRates(), settings.nanoTime()));
    this.replies = IdempotentHandler.builder().group(settings.replyGroup())
        .transactions(new ProducerTransactions(settings.producer())).policy(settings.replyPolicy())
        .clock(settings.clock()).handler((c, m) -> onReply(ProducerTransactions.current(), m)).build();
  }

  @Override
  public <D> boolean start(SagaDefinition<D> definition, String sagaId, D data) {
    return settings.producer().inTransaction(tx -> start(tx, definition, sagaId, data));
  }

  @Override
  public <D> boolean start(TxnContext tx, SagaDefinition<D> definition, String sagaId, D data) {
    if (settings.definitions().get(definition.name()) != definition) {
      throw new IllegalArgumentException("saga definition '" + definition.name()
          + "' is not registered with this coordinator (SagaCoordinatorBuilder.definitions)");
    }
    if (sagaId == null || sagaId.isEmpty() || sagaId.length() > 128) {
      throw new IllegalArgumentException("saga.id must be 1-128 characters, but was " + sagaId);
    }
    try {
      Connection c = tx.connection();
      Instant now = moves.now();
      if (!SagaStore.insert(c, sagaId, Envelope.DEFAULT_TENANT, definition.name(), definition.codec().encode(data),
          now, now.plus(definition.deadline()), now)) {
        log.debug("Saga {} exists already: not started again", sagaId);
        return false;
      }
      SagaRow row = SagaStore.lock(c, sagaId).orElseThrow();
      moves.event(c, row, null, null, "STARTED", null, null);
      moves.forward(tx, definition, row, row, 0, data);
      settings.metrics().started(definition.name());
      return true;
    } catch (RuntimeException e) {
      throw e;
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Saga " + sagaId + " could not start", null, e); // an outage stays an outage
    } catch (Exception e) {
      throw new SagaException("Saga " + sagaId + " could not start: " + e, sagaId, e);
    }
  }

  @Override
  public IdempotentHandler replyHandler() {
    return replies;
  }

  @Override
  public int poll() {
    int driven = 0;
    while (driven < settings.batchSize()) {
      AtomicReference<SagaRow> claimed = new AtomicReference<>();
      boolean more;
      try {
        more = Boolean.TRUE.equals(settings.producer().inTransaction(tx -> {
          Optional<SagaRow> due = SagaStore.claimDue(tx.connection(), moves.now());
          if (due.isEmpty()) {
            return false;
          }
          claimed.set(due.get());
          due(tx, due.get());
          return true;
        }));
      } catch (DatabaseUnavailableException | BrokerUnavailableException e) {
        throw e; // an outage (a commit of unknown outcome too): every saga waits for it alike, the next poll tries again
      } catch (RuntimeException e) {
        if (claimed.get() == null) {
          throw e;
        }
        // this saga cannot be driven (a definition this instance does not know, data its codec cannot read, a
        // command the producer refuses): set it aside, or it would be claimed first again by every poll of every
        // instance and no other saga's timeout, deadline or compensation would ever run
        setAside(claimed.get(), e);
        more = true;
      }
      if (!more) {
        break;
      }
      driven++;
    }
    return driven;
  }

  /**
   * Records why {@code row} could not be driven and makes it due again {@link #SET_ASIDE} later. The same error again
   * (the saga's {@code last_error}) writes no new event and logs at debug only: a saga that stays undrivable (its
   * definition is gone) must not grow the event table and the log every 30 s for ever; the metric counts each time.
   */
  private void setAside(SagaRow row, RuntimeException failure) {
    Instant now = moves.now();
    Instant next = now.plus(SET_ASIDE);
    String error = failure.toString();
    String reason = error.length() > MAX_ERROR ? error.substring(0, MAX_ERROR) + "…" : error;
    boolean again = reason.equals(row.lastError());
    boolean recorded = Boolean.TRUE.equals(settings.producer().inTransaction(tx -> {
      if (!SagaStore.setAside(tx.connection(), row, next, reason, now)) {
        return false;
      }
      if (!again) {
        moves.event(tx.connection(), row, null, row.attempt(), "SET_ASIDE", null, reason);
      }
      return true;
    }));
    if (!recorded) {
      log.warn("Saga {} could not be driven ({}), and moved on meanwhile (another instance or an operator): not set"
          + " aside", row.id(), reason);
      return;
    }
    settings.metrics().setAside(row.definition());
    if (again) {
      log.debug("Saga {} still cannot be driven, set aside again until {}: {}", row.id(), next, reason);
    } else {
      log.error("Saga {} (definition {}, {} at step {}) could not be driven and is set aside until {} (and every {}"
          + " while the error stays the same, logged once); the other due sagas go on: {}", row.id(),
          row.definition(), row.state(), row.step(), next, SET_ASIDE, reason, failure);
    }
  }

  @Override
  public synchronized void startPolling() {
    if (poller != null) {
      return;
    }
    poller = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "converge-saga-poll-" + settings.instanceId());
      t.setDaemon(true);
      return t;
    });
    long every = settings.pollInterval().toMillis();
    poller.scheduleWithFixedDelay(() -> {
      try {
        poll();
      } catch (RuntimeException e) {
        log.warn("Saga poll of {} failed; next poll in {} ms", settings.instanceId(), every, e);
      }
    }, 0, every, TimeUnit.MILLISECONDS);
  }

  @Override
  public synchronized void close() {
    if (poller != null) {
      poller.shutdownNow();
      poller = null;
    }
  }

  /** How long a saga that could not be driven waits before it is tried again. */
  static final Duration SET_ASIDE = Duration.ofSeconds(30);
  private static final int MAX_ERROR = 2000;

  @SuppressWarnings("unchecked")
  private SagaDefinition<Object> definition(SagaRow row) {
    SagaDefinition<Object> def = (SagaDefinition<Object>) settings.definitions().get(row.definition());
    if (def == null) {
      throw new SagaException("Saga " + row.id() + " is of definition '" + row.definition()
          + "', which this coordinator does not know", row.id());
    }
    return def;
  }

  /** A due saga: a reply's timeout, a pending send, or its deadline. */
  private void due(TxnContext tx, SagaRow row) throws Exception {
    SagaDefinition<Object> def = definition(row);
    Object data = def.codec().decode(row.data());
    SagaStep<Object> s = def.step(row.step());
    Instant now = moves.now();
    if (row.state() == SagaState.RUNNING) {
      if (!now.isBefore(row.deadline())) {
        moves.event(tx.connection(), row, s.name(), row.attempt(), "DEADLINE", null, null);
        // a step whose command went out may have happened: it is compensated too (its participant's barrier
        // turns a compensation of nothing into an empty one)
        moves.compensate(tx, def, row, row, row.sends() > 0 ? row.step() : row.step() - 1, data);
      } else if (!row.awaiting()) {
        moves.sendForward(tx, def, row, row, row.attempt(), row.sends() + 1, "SENT", data);
      } else {
        moves.event(tx.connection(), row, s.name(), row.attempt(), "TIMED_OUT", null, null);
        if (row.sends() < s.retry().maxAttempts()) {
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
      if (failures >= def.compensationAttempts()) {
        moves.compensationFailed(tx, def, row, row, failures, "no reply after " + row.sends() + " sends");
      } else {
        moves.sendCompensation(tx, def, row, row.pending(row.attempt(), failures, now, "no reply"), row.attempt(),
            data);
      }
    }
  }

  private void onReply(TxnContext tx, IncomingMessage m) throws Exception {
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
    String note = m.header(SagaHeaders.OUTCOME) + (reason == null ? "" : " " + reason) + " " + body;
    Optional<SagaRow> found = SagaStore.lock(c, id);
    if (found.isEmpty()) {
      SagaStore.event(c, id, step, attempt, "LATE_REPLY", m.envelopeMessageId(), "no such saga; " + note,
          moves.now());
      return;
    }
    SagaRow row = found.get();
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
      settings.metrics().replyIgnored(def.name(), kind);
      log.info("Saga {}: {} for step '{}' attempt {} ({}) ignored; the saga is {} at step {} attempt {}", id, kind,
          step, attempt, direction, row.state(), row.step(), row.attempt());
      return;
    }
    moves.event(c, row, step, attempt, replied, m.envelopeMessageId(), note);
    if (settings.metrics() != SagaMetrics.NONE) {
      Instant sent = SagaStore.firstSent(c, id, step, attempt, forward ? "SENT" : "COMPENSATION_SENT");
      if (sent != null) {
        settings.metrics().stepReplied(def.name(), step, direction, Duration.between(sent, moves.now()));
      }
    }
    Object data = def.codec().decode(row.data());
    SagaStep<Object> s = def.step(index);
    if (!forward) {
      switch (ReplyClassifier.byOutcomeHeader().classify(reply)) {
        case SUCCESS -> {
          moves.event(c, row, step, attempt, "COMPENSATED", null, null);
          moves.compensate(tx, def, row, row, index - 1, data);
        }
        // the participant says money is wrong (e.g. its forward work ran and it has no undo): asking again would
        // not help, a person must look
        case ANOMALY -> moves.stop(tx, def, row, step, "anomaly replied to the compensation of step '" + step
            + "': " + note);
        default -> moves.compensationFailed(tx, def, row, row, row.failures() + 1, "participant replied " + note);
      }
      return;
    }
    ReplyClass kind = s.classifier().classify(reply);
    switch (kind) {
      case SUCCESS -> {
        Object next = s.onSuccess(data, reply);
        moves.forward(tx, def, row, row.withData(def.codec().encode(next)), index + 1, next);
      }
      case BUSINESS_FAILURE -> {
        moves.event(c, row, step, attempt, "FAILED", null, note);
        moves.compensate(tx, def, row, row.pending(row.attempt(), row.failures(), moves.now(), note), index - 1,
            data);
      }
      case TECHNICAL_FAILURE -> {
        Instant now = moves.now();
        if (row.sends() < s.retry().maxAttempts()) {
          SagaRow saved = SagaStore.update(c, row, row.pending(row.attempt() + 1, row.failures(),
              Transitions.min(now.plus(Transitions.backoff(s, row.sends())), row.deadline()), note), step, now);
          moves.event(c, saved, step, attempt, "RETRIED", null, null);
        } else {
          SagaStore.update(c, row, row.pending(row.attempt(), row.failures(), row.deadline(), note)
              .sent(row.attempt(), row.sends(), row.deadline()), step, now);
        }
      }
      case ANOMALY -> moves.stop(tx, def, row, step, "anomaly replied to step '" + step + "': " + note);
      default -> throw new IllegalStateException(kind.name());
    }
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
