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
import io.converge.core.tracing.Tracing;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The implementation of {@link IdempotentHandler}. Thread-safe: all state is in the database. */
public final class IdempotentHandlerImpl implements IdempotentHandler {

  private static final Logger log = LoggerFactory.getLogger(IdempotentHandlerImpl.class);

  private final GroupSetup g;
  private final FailureRecorder failures;
  private final HeldMessages held;
  private final ParkedMessages parked;
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
    this(group, handler, tx, idResolver, policy, classifier, onBusinessFailure, metrics, clock, claimWithFirstStatement,
        EnvelopeRules.NONE);
  }

  /** Use {@link IdempotentHandler#builder()}; {@code rules}: what the handler accepts of an envelope. */
  public IdempotentHandlerImpl(String group, MessageHandler handler, TransactionRunner tx, MessageIdResolver idResolver,
      FailurePolicy policy, FailureClassifier classifier, BusinessFailureHook onBusinessFailure,
      ConsumerMetrics metrics, Clock clock, boolean claimWithFirstStatement, EnvelopeRules rules) {
    this(group, handler, tx, idResolver, policy, classifier, onBusinessFailure, metrics, clock, claimWithFirstStatement,
        rules, Tracing.none(), false);
  }

  /**
   * Use {@link IdempotentHandler#builder()}; {@code tracing}, {@code traceAsParent}: the spans of the runs of parked
   * and held messages (a first delivery's span is {@link TracedHandler}'s).
   */
  public IdempotentHandlerImpl(String group, MessageHandler handler, TransactionRunner tx, MessageIdResolver idResolver,
      FailurePolicy policy, FailureClassifier classifier, BusinessFailureHook onBusinessFailure,
      ConsumerMetrics metrics, Clock clock, boolean claimWithFirstStatement, EnvelopeRules rules, Tracing tracing,
      boolean traceAsParent) {
    this.claimWithFirstStatement = claimWithFirstStatement && tx instanceof JdbcTransactionRunner;
    this.g = new GroupSetup(group, handler, tx, idResolver, policy, classifier,
        metrics, clock, rules, tracing, traceAsParent);
    this.failures = new FailureRecorder(g, onBusinessFailure);
    this.held = new HeldMessages(g, failures);
    this.parked = new ParkedMessages(g);
  }

  @Override
  public String group() {
    return g.group();
  }

  @Override
  public Outcome handle(IncomingMessage message) {
    EnvelopeCheck.Violation invalid = EnvelopeCheck.check(message);
    if (invalid != null) {
      return failures.parkInvalidEnvelope(message, invalid); // else the claim fails for ever and its queue stops
    }
    RejectedMessage forged = g.rules().signature(message); // before the claim: a forged id is not trusted
    if (forged != null) {
      return refused(message, ResolvedId.orNull(g.idResolver(), message), forged);
    }
    String id;
    try {
      id = ResolvedId.of(g.idResolver(), message);
    } catch (MissingMessageIdException e) {
      return failures.deadLetterWithoutId(message, e);
    }
    RejectedMessage replayed = g.rules().age(message, g.clock().instant());
    if (replayed != null) {
      return refused(message, id, replayed);
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
        outcome = g.tx().inTransaction(c -> {
          PipelinedClaim pipelinedClaim = pipelined
              ? PipelinedClaim.open(c, tenant, g.group(), id, message.topic(), message.brokerKey(), g.clock().instant())
              : null;
          if (pipelinedClaim != null) {
            try {
              g.handle(pipelinedClaim.connection(), message, id);
            } catch (Throwable e) {
              pipelinedClaim.afterFailure(e); // a refused claim is the outcome, not the handler's error
              throw e;
            }
            pipelinedClaim.afterHandler();
            return Outcome.PROCESSED;
          }
          int claim = DedupStatements.claimForHandler(c, tenant, g.group(), id, message.topic(), message.brokerKey(),
              g.clock().instant());
          if (claim == DedupStatements.HELD) {
            return Outcome.HELD; // nothing written: parked behind its key below
          }
          if (claim != 1) {
            return Outcome.DUPLICATE;
          }
          g.handle(c, message, id);
          return Outcome.PROCESSED;
        });
        if (outcome == Outcome.HELD) {
          outcome = failures.run(message, id, () -> held.hold(message, tenant, id));
        }
        kind = null;
        failure = null;
      } catch (PipelinedClaim.Refused refused) {
        // a duplicate or a held key: the handler's statements never ran, its transaction rolled back
        outcome = refused.outcome();
        if (outcome == Outcome.HELD) {
          outcome = failures.run(message, id, () -> held.hold(message, tenant, id));
        }
        kind = null;
        failure = null;
      } catch (RejectedMessage rejected) {
        // its schema is not read here: parked, not a failure, no attempt counted, no retry
        outcome = failures.parkRejected(message, id, rejected);
        kind = null;
        failure = null;
      } catch (Exception e) {
        // Whatever the kind, the handler's whole transaction has rolled back: its writes, its claim and the
        // messages it published (a savepoint would keep published messages alive). The outcome of a failure
        // for good is recorded in a transaction of its own; a concurrent copy that was waiting on the claim
        // may meanwhile take it and run the handler itself, and whichever records first wins.
        failure = e;
        kind = g.classifier().classify(e);
        g.metrics().failure(g.group(), message.topic(), kind);
        try {
          outcome = switch (kind) {
            case BUSINESS -> failures.businessFailure(message, tenant, id, e);
            case MONEY_ANOMALY -> failures.park(message, tenant, id, "TICKETED", "MONEY_ANOMALY", e, 0);
            case TECHNICAL -> failures.technicalFailure(message, tenant, id, e);
            case UNAVAILABLE -> null;
          };
        } catch (OutcomeNotRecordedException notRecorded) {
          if (g.classifier().classify(notRecorded) != FailureKind.UNAVAILABLE) {
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
        log.info("Message {} of group {} ran after waiting out an outage ({} runs refused): {}", id, g.group(),
            outageWaits,
            outcome);
      }
      if (outcome == Outcome.DUPLICATE) {
        log.debug("Duplicate message {} of group {} on {}: acked without running the handler", id, g.group(),
            message.topic());
      } else {
        log.debug("Message {} of group {}: {}", id, g.group(), outcome);
      }
      g.metrics().outcome(g.group(), message.topic(), outcome);
      return outcome;
    }
  }

  /** Parks {@code message} refused on arrival by the envelope rules and counts its outcome. */
  private Outcome refused(IncomingMessage message, String id, RejectedMessage rejected) {
    Outcome outcome = failures.parkRejected(message, id, rejected);
    g.metrics().outcome(g.group(), message.topic(), outcome);
    return outcome;
  }

  /**
   * The database or a broker is unavailable: nothing is recorded (recording needs the database too) and
   * no attempt is counted; the same message runs again after the policy's outage backoff. The calling
   * thread, the binding's consumer thread, is blocked meanwhile, which pauses the binding's intake.
   * An interrupt (the binding closing) ends the wait: the message is not acked and is redelivered.
   */
  private void awaitRecovery(IncomingMessage message, String id, Exception failure, int waits) {
    Duration delay = g.policy().outageDelay(waits, ThreadLocalRandom.current().nextDouble());
    if (waits == 1) {
      log.warn("Message {} of group {} on {} waits for the database or broker to recover (no attempt counted), "
          + "running it again in {}: {}", id, g.group(), message.topic(), delay, failure.toString());
    } else {
      log.debug("Message {} of group {}: still unavailable after {} runs, next in {}: {}", id, g.group(), waits, delay,
          failure.toString());
    }
    if (Thread.currentThread().isInterrupted()) {
      throw new OutcomeNotRecordedException("Stopped while message " + id + " of group " + g.group()
          + " waited for an outage to end; it must be redelivered", id, failure);
    }
    FailureRecorder.pause(delay,
        "Stopped while message " + id + " of group " + g.group() + " waited for an outage to end",
        id, failure);
  }

  @Override
  public Outcome resume(long dlqId) {
    Outcome outcome = parked.resume(dlqId);
    try {
      // the messages held behind it, in order: on its topic only, the group's other topics are other handlers'
      String topic = g.tx().inTransaction(c -> DeadLetterStore.topic(c, dlqId, g.group()));
      held.releaseAll(new String[]{topic});
    } catch (Exception e) {
      log.warn("Held messages of group {} not released after resuming converge_dlq.id={}; the binding releases "
          + "them later: {}", g.group(), dlqId, e.toString());
    }
    return outcome;
  }

  @Override
  public int releaseHeld(Collection<String> topics) {
    if (Objects.requireNonNull(topics, "topics").isEmpty()) {
      throw new IllegalArgumentException("releaseHeld of group " + g.group() + " needs the handler's topics, but "
          + "was given none");
    }
    String[] scope = topics.toArray(String[]::new);
    return parked.redriveMarked(scope) + held.releaseAll(scope);
  }
}
