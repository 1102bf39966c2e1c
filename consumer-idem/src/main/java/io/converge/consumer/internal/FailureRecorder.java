package io.converge.consumer.internal;

import io.converge.core.internal.Text;
import io.converge.consumer.IdempotentHandler.BusinessFailureHook;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MissingMessageIdException;
import io.converge.consumer.Outcome;
import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records the outcome of a run of one group's handler that failed: a refusal by the business, a technical
 * failure's attempt (parked in {@code converge_dlq} with a ticket once the policy's attempts are spent), a money
 * anomaly (parked with a ticket at once), a message without usable id or with an envelope the tables cannot hold
 * (parked, nothing claimed). Each outcome is recorded in a transaction of its own (the handler's rolled back),
 * claiming the id first so that a concurrent copy that recorded first wins.
 * When nothing could be recorded it throws {@link OutcomeNotRecordedException}: the binding must not ack. Thread-safe:
 * all state is in the database.
 *
 * @param g the group's handler, policy and stores
 * @param onBusinessFailure called in the transaction that records a business failure
 */
record FailureRecorder(GroupSetup g, BusinessFailureHook onBusinessFailure) {

  static final int MAX_ERROR_TEXT = 2000;

  private static final Logger log = LoggerFactory.getLogger(FailureRecorder.class);

  Outcome deadLetterWithoutId(IncomingMessage message, MissingMessageIdException e) {
    long dlqId = run(message, null,
        () -> g.tx().inTransaction(c -> DeadLetterStore.insertDlq(c, g.group(), message, null,
            "MISSING_MESSAGE_ID", e.getMessage(), 0, g.clock().instant())));
    log.warn("Message without usable id parked as converge_dlq.id={} (group {}, topic {}, broker id {}): {}", dlqId,
        g.group(), message.topic(), message.brokerMessageId(), e.getMessage());
    g.metrics().outcome(g.group(), message.topic(), Outcome.DEAD_LETTERED);
    return Outcome.DEAD_LETTERED;
  }

  /**
   * Parks a message whose envelope the tables cannot hold ({@link EnvelopeCheck}), whole (headers as sent,
   * payload), with the offending field quoted; nothing is claimed and the handler does not run.
   */
  Outcome parkInvalidEnvelope(IncomingMessage message, EnvelopeCheck.Violation invalid) {
    String id = ResolvedId.orNull(g.idResolver(), message);
    EnvelopeCheck.Stored stored = EnvelopeCheck.Stored.of(message);
    String reason = invalid.reason();
    long dlqId = run(message, id,
        () -> g.tx().inTransaction(c -> DeadLetterStore.insertDlq(c, g.group(), message, stored, id,
            EnvelopeCheck.REASON_CODE, reason, 0, g.clock().instant())));
    log.warn("Message {} (broker id {}) of group {} on {} parked as converge_dlq.id={}: its envelope cannot be stored, "
        + "{}; publish its payload again with a valid envelope, then discard it", id, stored.brokerMessageId(),
        g.group(), stored.topic(), dlqId, reason);
    g.metrics().outcome(g.group(), stored.topic(), Outcome.DEAD_LETTERED);
    return Outcome.DEAD_LETTERED;
  }

  /**
   * Parks a message its {@link EnvelopeRules} refused, whole, with the rejection's reason code and reason: never run,
   * no attempt counted, no ticket; its key is held like behind any parked row. A rejection that
   * {@linkplain RejectedMessage#claims() claims} the id claims it first ({@link Outcome#DUPLICATE} when the dedup
   * table knows it), one that does not (a forged message's id is not trusted) claims nothing.
   */
  Outcome parkRejected(IncomingMessage message, String id, RejectedMessage rejected) {
    String tenant = message.tenant();
    Long dlqId = run(message, id, () -> g.tx().inTransaction(c -> {
      if (rejected.claims()) {
        if (!DedupStatements.claim(c, tenant, g.group(), id, "PROCESSED", null, message.topic(),
            g.clock().instant())) {
          return null;
        }
        DedupStatements.setOutcome(c, tenant, g.group(), id, "DEAD_LETTERED",
            Text.abbreviate(rejected.toString(), MAX_ERROR_TEXT));
        DedupStatements.clearAttempts(c, tenant, g.group(), id);
      }
      return DeadLetterStore.insertDlq(c, g.group(), message, id, rejected.code(),
          Text.abbreviate(rejected.reason(), MAX_ERROR_TEXT), 0, g.clock().instant());
    }));
    if (dlqId == null) {
      return Outcome.DUPLICATE;
    }
    log.warn("Message {} (broker id {}, key {}) of group {} on {} parked ({}) as converge_dlq.id={}, never run: {}", id,
        message.brokerMessageId(), message.brokerKey(), g.group(), message.topic(), rejected.code(), dlqId,
        rejected.reason());
    g.metrics().parked(g.group(), message.topic(), rejected.code());
    return Outcome.DEAD_LETTERED;
  }

  Outcome businessFailure(IncomingMessage message, String tenant, String id, Exception failure) {
    return run(message, id, () -> g.tx().inTransaction(c -> {
      if (!DedupStatements.claim(c, tenant, g.group(), id, "PROCESSED", null, message.topic(), g.clock().instant())) {
        return Outcome.DUPLICATE;
      }
      return markBusinessFailure(c, message, tenant, id, failure);
    }));
  }

  /** On a connection that holds the claim: records the refusal and runs the hook. */
  Outcome markBusinessFailure(Connection c, IncomingMessage message, String tenant, String id, Exception failure)
      throws Exception {
    String detail = Text.abbreviate(String.valueOf(failure.getMessage()), MAX_ERROR_TEXT);
    DedupStatements.setOutcome(c, tenant, g.group(), id, "BUSINESS_FAILURE", detail);
    DedupStatements.clearAttempts(c, tenant, g.group(), id);
    onBusinessFailure.accept(c, message, failure);
    log.warn("Message {} of group {} refused by the business, not retried: {}", id, g.group(), detail);
    return Outcome.BUSINESS_FAILURE;
  }

  /**
   * Counts the attempt; parks the message once the policy's attempts are spent, else blocks the consumer thread for
   * the backoff (the message's own delivery: later messages of its queue wait behind it). Null means: retry now.
   */
  Outcome technicalFailure(IncomingMessage message, String tenant, String id, Exception failure) {
    String error = Text.abbreviate(failure.toString(), MAX_ERROR_TEXT);
    int attempts = run(message, id,
        () -> g.tx()
            .inTransaction(c -> DedupStatements.recordAttempt(c, tenant, g.group(), id, error, g.clock().instant())));
    if (attempts >= g.policy().maxAttempts()) {
      return park(message, tenant, id, "DEAD_LETTERED", "RETRIES_EXHAUSTED", failure, attempts);
    }
    Duration delay = g.policy().delay(attempts, ThreadLocalRandom.current().nextDouble());
    log.debug("Message {} of group {} failed (attempt {}/{}), retrying in {}: {}", id, g.group(), attempts,
        g.policy().maxAttempts(), delay, error);
    pause(delay, "Interrupted while backing off message " + id + " of group " + g.group(), id, failure);
    return null;
  }

  /** Parks the message in the DLQ with a ticket, as {@code outcome} for {@code reasonCode}. */
  Outcome park(IncomingMessage message, String tenant, String id, String outcome, String reasonCode,
      Exception failure, int attempts) {
    return run(message, id, () -> g.tx().inTransaction(c -> {
      if (!DedupStatements.claim(c, tenant, g.group(), id, "PROCESSED", null, message.topic(), g.clock().instant())) {
        return Outcome.DUPLICATE;
      }
      String reason = Text.abbreviate(failure.toString(), MAX_ERROR_TEXT);
      DedupStatements.setOutcome(c, tenant, g.group(), id, outcome, reasonCode + ": " + reason);
      DedupStatements.clearAttempts(c, tenant, g.group(), id);
      long dlqId = DeadLetterStore.insertDlq(c, g.group(), message, id, reasonCode, reason, attempts,
          g.clock().instant());
      long ticketId = DeadLetterStore.insertTicket(c, g.group(), message, id, dlqId, reasonCode, reason,
          g.clock().instant());
      log.error("Message {} of group {} parked ({}) as converge_dlq.id={}, manual converge_ticket.id={}: {}", id,
          g.group(), reasonCode, dlqId, ticketId, reason);
      return Outcome.valueOf(outcome);
    }));
  }

  /** A bookkeeping step that may fail. */
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
          + " of group " + g.group() + "; it must be redelivered", id, e);
    }
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
}
