package io.converge.consumer.internal;

import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.FailureClassifier;
import io.converge.consumer.FailureKind;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import io.converge.consumer.MessageIdResolver;
import io.converge.consumer.MissingMessageIdException;
import io.converge.consumer.Outcome;
import io.converge.consumer.TransactionRunner;
import io.converge.producer.ConvergeException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The implementation of {@link IdempotentHandler}. Thread-safe: all state is in the database. */
public final class IdempotentHandlerImpl implements IdempotentHandler {

  private static final Logger log = LoggerFactory.getLogger(IdempotentHandlerImpl.class);
  private static final int MAX_ERROR_TEXT = 2000;

  private final String group;
  private final MessageHandler handler;
  private final TransactionRunner tx;
  private final MessageIdResolver idResolver;
  private final FailurePolicy policy;
  private final FailureClassifier classifier;
  private final BusinessFailureHook onBusinessFailure;
  private final ConsumerMetrics metrics;
  private final Clock clock;
  private final HeldMessages held;
  private final boolean claimWithFirstStatement;

  /** Use {@link IdempotentHandler#builder()}. */
  public IdempotentHandlerImpl(String group, MessageHandler handler, TransactionRunner tx, MessageIdResolver idResolver,
      FailurePolicy policy, FailureClassifier classifier, BusinessFailureHook onBusinessFailure,
      ConsumerMetrics metrics,
      Clock clock) {
    this(group, handler, tx, idResolver, policy, classifier, onBusinessFailure, metrics, clock, false);
  }

  /**
   * Use {@link IdempotentHandler#builder()}; {@code claimWithFirstStatement}: a first delivery's claim
   * travels with the handler's first statement ({@link PipelinedClaim}) when {@code tx} is plain JDBC.
   */
  public IdempotentHandlerImpl(String group, MessageHandler handler, TransactionRunner tx, MessageIdResolver idResolver,
      FailurePolicy policy, FailureClassifier classifier, BusinessFailureHook onBusinessFailure,
      ConsumerMetrics metrics,
      Clock clock, boolean claimWithFirstStatement) {
    this.claimWithFirstStatement = claimWithFirstStatement && tx instanceof JdbcTransactionRunner;
    this.group = group;
    this.handler = HandlerScope.wrap(group, handler, idResolver);
    this.tx = tx;
    this.idResolver = idResolver;
    this.policy = policy;
    this.classifier = classifier;
    this.onBusinessFailure = onBusinessFailure;
    this.metrics = metrics;
    this.clock = clock;
    this.held = new HeldMessages(this, group, this.handler, tx, idResolver, policy, classifier, onBusinessFailure,
        metrics,
        clock);
  }

  @Override
  public String group() {
    return group;
  }

  @Override
  public Outcome handle(IncomingMessage message) {
    String id;
    try {
      id = ResolvedId.of(idResolver, message);
    } catch (MissingMessageIdException e) {
      return deadLetterWithoutId(message, e);
    }
    String tenant = message.tenant();
    int outageWaits = 0;
    boolean firstRun = true;
    while (true) {
      Outcome outcome;
      FailureKind kind;
      Exception failure;
      // a first delivery's first run: the claim may travel with the handler's first statement
      boolean pipelined = claimWithFirstStatement && outageWaits == 0 && firstRun && message.deliveryCount() == 1;
      firstRun = false;
      try {
        outcome = tx.inTransaction(c -> {
          PipelinedClaim pipelinedClaim = pipelined
              ? PipelinedClaim.open(c, tenant, group, id, message.topic(), message.brokerKey(), clock.instant())
              : null;
          if (pipelinedClaim != null) {
            try {
              handler.handle(pipelinedClaim.connection(), message);
            } catch (Throwable e) {
              pipelinedClaim.afterFailure(e); // a refused claim is the outcome, not the handler's error
              throw e;
            }
            pipelinedClaim.afterHandler();
            return Outcome.PROCESSED;
          }
          int claim = ConsumerStore.claimForHandler(c, tenant, group, id, message.topic(), message.brokerKey(),
              clock.instant());
          if (claim == ConsumerStore.HELD) {
            return Outcome.HELD; // nothing written: parked behind its key below
          }
          if (claim != 1) {
            return Outcome.DUPLICATE;
          }
          handler.handle(c, message);
          return Outcome.PROCESSED;
        });
        if (outcome == Outcome.HELD) {
          outcome = run(message, id, () -> held.hold(message, tenant, id));
        }
        kind = null;
        failure = null;
      } catch (PipelinedClaim.Refused refused) {
        // a duplicate or a held key: the handler's statements never ran, its transaction rolled back
        outcome = refused.outcome();
        if (outcome == Outcome.HELD) {
          outcome = run(message, id, () -> held.hold(message, tenant, id));
        }
        kind = null;
        failure = null;
      } catch (Exception e) {
        // Whatever the kind, the handler's whole transaction has rolled back: its writes, its claim and the
        // messages it published (a savepoint would keep published messages alive). The outcome of a failure
        // for good is recorded in a transaction of its own; a concurrent copy that was waiting on the claim
        // may meanwhile take it and run the handler itself, and whichever records first wins.
        failure = e;
        kind = classifier.classify(e);
        metrics.failure(group, message.topic(), kind);
        try {
          outcome = switch (kind) {
            case BUSINESS -> recordBusinessFailure(message, tenant, id, e);
            case MONEY_ANOMALY -> park(message, tenant, id, "TICKETED", "MONEY_ANOMALY", e, 0);
            case TECHNICAL -> afterTechnicalFailure(message, tenant, id, e);
            case UNAVAILABLE -> null;
          };
        } catch (OutcomeNotRecordedException notRecorded) {
          if (classifier.classify(notRecorded) != FailureKind.UNAVAILABLE) {
            throw notRecorded;
          }
          kind = FailureKind.UNAVAILABLE; // the database went away after the handler failed
          failure = notRecorded;
          outcome = null;
        }
      }
      if (kind == FailureKind.UNAVAILABLE) {
        awaitRecovery(message, id, failure, ++outageWaits);
        continue;
      }
      if (outcome == null) {
        continue; // a technical failure: retry after its backoff
      }
      if (outageWaits > 0) {
        log.info("Message {} of group {} ran after waiting out an outage ({} runs refused): {}", id, group, outageWaits,
            outcome);
      }
      if (outcome == Outcome.DUPLICATE) {
        log.debug("Duplicate message {} of group {} on {}: acked without running the handler", id, group,
            message.topic());
      } else {
        log.debug("Message {} of group {}: {}", id, group, outcome);
      }
      metrics.outcome(group, message.topic(), outcome);
      return outcome;
    }
  }

  /**
   * The database or a broker is unavailable: nothing is recorded (recording needs the database too) and
   * no attempt is counted; the same message runs again after the policy's outage backoff. The calling
   * thread, the binding's consumer thread, is blocked meanwhile, which pauses the binding's intake.
   * An interrupt (the binding closing) ends the wait: the message is not acked and is redelivered.
   */
  private void awaitRecovery(IncomingMessage message, String id, Exception failure, int waits) {
    Duration delay = policy.outageDelay(waits, ThreadLocalRandom.current().nextDouble());
    if (waits == 1) {
      log.warn("Message {} of group {} on {} waits for the database or broker to recover (no attempt counted), "
          + "running it again in {}: {}", id, group, message.topic(), delay, failure.toString());
    } else {
      log.debug("Message {} of group {}: still unavailable after {} runs, next in {}: {}", id, group, waits, delay,
          failure.toString());
    }
    if (Thread.currentThread().isInterrupted()) {
      throw new OutcomeNotRecordedException("Stopped while message " + id + " of group " + group
          + " waited for an outage to end; it must be redelivered", id, failure);
    }
    pause(delay, "Stopped while message " + id + " of group " + group + " waited for an outage to end", id, failure);
  }

  /** Blocks the consumer thread for {@code delay}; an interrupt (the binding closing) leaves the message to redelivery. */
  static void pause(Duration delay, String interrupted, String id, Exception failure) {
    try {
      Thread.sleep(delay.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new OutcomeNotRecordedException(interrupted + "; it must be redelivered", id, failure);
    }
  }

  @Override
  public Outcome resume(long dlqId) {
    Outcome outcome = resumeParked(dlqId);
    try {
      held.releaseAll(); // the messages held behind it, in order
    } catch (RuntimeException e) {
      log.warn("Held messages of group {} not released after resuming converge_dlq.id={}; the binding releases "
          + "them later: {}", group, dlqId, e.toString());
    }
    return outcome;
  }

  @Override
  public int releaseHeld() {
    return redriveMarked() + held.releaseAll();
  }

  /**
   * Runs the parked messages of this group that ops marked for re-drive ({@code ConsumerOps.redrive}), oldest
   * first, as {@link #resume} does, each in a transaction that holds its row ({@code FOR UPDATE SKIP LOCKED}), so
   * that instances running this concurrently take different rows. A technical failure is retried after the
   * policy's backoff up to its attempts; one that persists, or a failure for good, leaves the row parked, marked
   * {@code REDRIVE_FAILED} with the failure; one that meets an outage stays marked and is tried again at the
   * next round.
   */
  private int redriveMarked() {
    int ran = 0;
    long after = 0;
    for (int rows = 0; rows < 100; rows++) {
      long[] dlqId = {0};
      Outcome outcome = null;
      Exception failure = null;
      for (int attempt = 1;; attempt++) {
        long retried = dlqId[0];
        long from = retried != 0 ? retried - 1 : after;
        try {
          outcome = tx.inTransaction(c -> {
            long locked = ConsumerStore.lockNextMarked(c, group, from);
            if (locked == 0 || (retried != 0 && locked != retried)) {
              return null; // none marked, or the retried one was taken by another instance
            }
            dlqId[0] = locked;
            return resumeLocked(c, locked);
          });
          failure = null;
          break;
        } catch (Exception e) {
          FailureKind kind = e instanceof NotResumableException ? FailureKind.BUSINESS : classifier.classify(e);
          if (kind == FailureKind.UNAVAILABLE) {
            throw e instanceof RuntimeException re ? re
                : new ConvergeException("Re-drive of group " + group + " met an outage; the marks stay", e);
          }
          failure = e;
          if (kind != FailureKind.TECHNICAL || attempt >= policy.maxAttempts()) {
            break;
          }
          pause(policy.delay(attempt, ThreadLocalRandom.current().nextDouble()),
              "Interrupted while backing off the re-drive of converge_dlq.id " + dlqId[0], null, e);
        }
      }
      if (outcome == null && failure == null) {
        if (dlqId[0] == 0) {
          return ran; // nothing (more) marked that no other instance holds
        }
        after = Math.max(after, dlqId[0]);
        continue;
      }
      if (failure == null) {
        log.warn("Parked message converge_dlq.id={} of group {} re-driven: {}", dlqId[0], group, outcome);
        ran++;
      } else {
        redriveFailed(dlqId[0], failure);
      }
      after = Math.max(after, dlqId[0]);
    }
    return ran;
  }

  private void redriveFailed(long dlqId, Exception failure) {
    if (dlqId == 0) {
      throw new ConvergeException("Could not lock a message of group " + group + " marked for re-drive", failure);
    }
    String text = abbreviate(failure.toString(), MAX_ERROR_TEXT);
    boolean marked;
    try {
      marked = tx.inTransaction(c -> ConsumerStore.redriveFailed(c, dlqId, text));
    } catch (Exception recording) {
      throw new ConvergeException("Could not record the failed re-drive of converge_dlq.id " + dlqId, recording);
    }
    if (marked) {
      log.warn("Re-drive of parked message converge_dlq.id={} of group {} failed; it stays parked: {}", dlqId, group,
          text);
    } else {
      log.debug("Re-drive of converge_dlq.id={} of group {} failed here but another instance settled it: {}", dlqId,
          group, text);
    }
  }

  /** A parked message that cannot be resumed as asked (held, behind an earlier one, not parked): no retry helps. */
  static final class NotResumableException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    NotResumableException(String message) {
      super(message);
    }
  }

  private Outcome resumeParked(long dlqId) {
    try {
      Outcome outcome = tx.inTransaction(c -> resumeLocked(c, dlqId));
      log.warn("Parked message converge_dlq.id={} of group {} resumed: {}", dlqId, group, outcome);
      return outcome;
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new ConvergeException(
          "Resuming converge_dlq.id " + dlqId + " of group " + group + " failed; it stays parked", e);
    }
  }

  /** Runs parked row {@code dlqId} through the handler on {@code c}, which then holds the row. */
  private Outcome resumeLocked(Connection c, long dlqId) throws Exception {
    if ("HELD".equals(ConsumerStore.reasonCode(c, dlqId, group))) {
      throw new NotResumableException("converge_dlq.id " + dlqId + " of group " + group
          + " is held behind a parked message of its key: resume or discard that one, the held ones follow");
    }
    long earlier = ConsumerStore.earlierParked(c, dlqId, group);
    if (earlier != 0) {
      // two parked rows of one key (the concurrent listener, or a hold that failed and parked): resuming
      // the later one first would apply it over the gap
      throw new NotResumableException("converge_dlq.id " + dlqId + " of group " + group
          + " has an earlier parked message of its key, converge_dlq.id " + earlier
          + ": resume or discard that one first");
    }
    IncomingMessage m = ConsumerStore.lockParked(c, dlqId, group);
    if (m == null) {
      throw new NotResumableException("No parked message with converge_dlq.id " + dlqId + " for group " + group);
    }
    String id = ResolvedId.of(idResolver, m);
    ConsumerStore.releaseParkedClaim(c, m.tenant(), group, id);
    ConsumerStore.markResumed(c, dlqId, clock.instant());
    if (!ConsumerStore.claim(c, m.tenant(), group, id, "PROCESSED", "resumed from converge_dlq " + dlqId, m.topic(),
        clock.instant())) {
      return Outcome.DUPLICATE;
    }
    ConsumerStore.clearAttempts(c, m.tenant(), group, id);
    handler.handle(c, m);
    return Outcome.PROCESSED;
  }

  private Outcome deadLetterWithoutId(IncomingMessage message, MissingMessageIdException e) {
    long dlqId = run(message, null, () -> tx.inTransaction(c -> ConsumerStore.insertDlq(c, group, message, null,
        "MISSING_MESSAGE_ID", e.getMessage(), 0, clock.instant())));
    log.warn("Message without usable id parked as converge_dlq.id={} (group {}, topic {}, broker id {}): {}", dlqId,
        group,
        message.topic(), message.brokerMessageId(), e.getMessage());
    metrics.outcome(group, message.topic(), Outcome.DEAD_LETTERED);
    return Outcome.DEAD_LETTERED;
  }

  private Outcome recordBusinessFailure(IncomingMessage message, String tenant, String id, Exception failure) {
    return run(message, id, () -> tx.inTransaction(c -> {
      if (!ConsumerStore.claim(c, tenant, group, id, "PROCESSED", null, message.topic(), clock.instant())) {
        return Outcome.DUPLICATE;
      }
      return markBusinessFailure(c, message, tenant, id, failure);
    }));
  }

  /** On a connection that holds the claim: records the refusal and runs the hook. */
  Outcome markBusinessFailure(Connection c, IncomingMessage message, String tenant, String id,
      Exception failure)
      throws Exception {
    String detail = abbreviate(String.valueOf(failure.getMessage()), MAX_ERROR_TEXT);
    ConsumerStore.setOutcome(c, tenant, group, id, "BUSINESS_FAILURE", detail);
    ConsumerStore.clearAttempts(c, tenant, group, id);
    onBusinessFailure.accept(c, message, failure);
    log.warn("Message {} of group {} refused by the business, not retried: {}", id, group, detail);
    return Outcome.BUSINESS_FAILURE;
  }

  /** Null means: retry now (after the backoff). */
  private Outcome afterTechnicalFailure(IncomingMessage message, String tenant, String id, Exception failure) {
    String error = abbreviate(failure.toString(), MAX_ERROR_TEXT);
    int attempts = run(message, id,
        () -> tx.inTransaction(c -> ConsumerStore.recordAttempt(c, tenant, group, id, error, clock.instant())));
    if (attempts >= policy.maxAttempts()) {
      return park(message, tenant, id, "DEAD_LETTERED", "RETRIES_EXHAUSTED", failure, attempts);
    }
    Duration delay = policy.delay(attempts, ThreadLocalRandom.current().nextDouble());
    log.debug("Message {} of group {} failed (attempt {}/{}), retrying in {}: {}", id, group, attempts,
        policy.maxAttempts(), delay, error);
    pause(delay, "Interrupted while backing off message " + id + " of group " + group, id, failure);
    return null;
  }

  private Outcome park(IncomingMessage message, String tenant, String id, String outcome, String reasonCode,
      Exception failure, int attempts) {
    return run(message, id, () -> tx.inTransaction(c -> {
      if (!ConsumerStore.claim(c, tenant, group, id, "PROCESSED", null, message.topic(), clock.instant())) {
        return Outcome.DUPLICATE;
      }
      return markParked(c, message, tenant, id, outcome, reasonCode, failure, attempts);
    }));
  }

  /** On a connection that holds the claim: parks the message in the DLQ and opens a ticket. */
  private Outcome markParked(Connection c, IncomingMessage message, String tenant, String id, String outcome,
      String reasonCode, Exception failure, int attempts) throws SQLException {
    String reason = abbreviate(failure.toString(), MAX_ERROR_TEXT);
    ConsumerStore.setOutcome(c, tenant, group, id, outcome, reasonCode + ": " + reason);
    ConsumerStore.clearAttempts(c, tenant, group, id);
    long dlqId = ConsumerStore.insertDlq(c, group, message, id, reasonCode, reason, attempts, clock.instant());
    long ticketId = ConsumerStore.insertTicket(c, group, message, id, dlqId, reasonCode, reason, clock.instant());
    log.error("Message {} of group {} parked ({}) as converge_dlq.id={}, manual converge_ticket.id={}: {}", id, group,
        reasonCode, dlqId, ticketId, reason);
    return Outcome.valueOf(outcome);
  }

  @FunctionalInterface
  interface Step<T> {

    T run() throws Exception;
  }

  /** Runs a bookkeeping step; its failure means the broker must redeliver (the caller does not ack). */
  <T> T run(IncomingMessage message, String id, Step<T> step) {
    try {
      return step.run();
    } catch (Exception e) {
      throw new OutcomeNotRecordedException("Could not record the outcome of message " + (id != null ? id : message)
          + " of group " + group + "; it must be redelivered", id, e);
    }
  }

  static String abbreviate(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max - 1) + "…";
  }
}
