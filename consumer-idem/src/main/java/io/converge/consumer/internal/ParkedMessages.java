package io.converge.consumer.internal;

import io.converge.core.internal.Text;
import io.converge.consumer.FailureKind;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.core.ConvergeException;
import java.sql.Connection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The parked messages of one group run again: {@link #resume} (a person fixed the cause) and the re-drive of the
 * rows ops marked ({@code ConsumerOps.redrive}). Each runs in one transaction that locks its row, releases its
 * dead-letter claim, marks it {@code RESUMED} and runs the handler. Thread-safe: all state is in the database,
 * apart from the in-memory {@link RetrySchedule} of re-drives backing off.
 */
final class ParkedMessages {

  private static final Logger log = LoggerFactory.getLogger(ParkedMessages.class);
  private static final int ROUND = 100;

  private final GroupSetup g;
  private final RetrySchedule retries;

  ParkedMessages(GroupSetup g) {
    this.g = g;
    this.retries = new RetrySchedule(g.clock());
  }

  /** Runs parked row {@code dlqId} now; its failure is thrown and the row stays parked. */
  Outcome resume(long dlqId) {
    try {
      Outcome outcome = g.tx().inTransaction(c -> resumeLocked(c, dlqId, "resume"));
      log.warn("Parked message converge_dlq.id={} of group {} resumed: {}", dlqId, g.group(), outcome);
      return outcome;
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new ConvergeException(
          "Resuming converge_dlq.id " + dlqId + " of group " + g.group() + " failed; it stays parked", e);
    }
  }

  /**
   * Runs the parked messages of this group on {@code topics} (the calling handler's; issue 31.4) that ops marked
   * for re-drive, oldest first, as {@link #resume} does,
   * each in a transaction that holds its row ({@code FOR UPDATE SKIP LOCKED}), so that instances running this
   * concurrently take different rows. A technical failure is retried after the policy's backoff, up to its
   * attempts, at a later round: the round goes on with the other rows meanwhile (see {@link RetrySchedule}). One
   * that persists, or a failure for good, leaves the row parked, marked {@code REDRIVE_FAILED} with the failure;
   * one that meets an outage stays marked and is tried again at the next round.
   *
   * @return how many ran
   */
  int redriveMarked(String[] topics) {
    int ran = 0;
    long after = 0;
    Set<Long> seen = new HashSet<>();
    for (int rows = 0; rows < ROUND; rows++) {
      long from = after;
      long[] dlqId = {0};
      Outcome outcome = null;
      Exception failure = null;
      try {
        outcome = g.tx().inTransaction(c -> {
          dlqId[0] = DeadLetterStore.lockNextMarked(c, g.group(), topics, from);
          if (dlqId[0] == 0 || retries.waiting(dlqId[0])) {
            return null; // none marked that no other instance holds, or this one backs off
          }
          return resumeLocked(c, dlqId[0], "redrive");
        });
      } catch (Exception e) {
        failure = e;
      }
      FailureKind kind = failure == null ? null
          : failure instanceof NotResumableException || failure instanceof RejectedMessage ? FailureKind.BUSINESS
              : g.classifier().classify(failure);
      if (kind == FailureKind.UNAVAILABLE) {
        throw failure instanceof RuntimeException re ? re
            : new ConvergeException("Re-drive of group " + g.group() + " met an outage; the marks stay", failure);
      }
      long id = dlqId[0];
      if (id == 0) {
        if (failure != null) {
          throw new ConvergeException("Could not lock a message of group " + g.group() + " marked for re-drive",
              failure);
        }
        retries.retainOnly(seen);
        return ran;
      }
      seen.add(id);
      after = id;
      if (failure == null) {
        if (outcome != null) {
          retries.settled(id);
          log.warn("Parked message converge_dlq.id={} of group {} re-driven: {}", id, g.group(), outcome);
          ran++;
        }
        continue;
      }
      int attempt = retries.attempts(id) + 1;
      if (kind == FailureKind.TECHNICAL && attempt < g.policy().maxAttempts()) {
        retries.retryLater(id, attempt, g.policy().delay(attempt, ThreadLocalRandom.current().nextDouble()));
        log.debug("Re-drive of converge_dlq.id={} of group {} failed (attempt {}/{}), retried at a later round: {}",
            id, g.group(), attempt, g.policy().maxAttempts(), failure.toString());
        continue;
      }
      retries.settled(id);
      redriveFailed(id, failure);
    }
    return ran;
  }

  private void redriveFailed(long dlqId, Exception failure) {
    String text = Text.abbreviate(failure.toString(), FailureRecorder.MAX_ERROR_TEXT);
    boolean marked;
    try {
      marked = g.tx().inTransaction(c -> DeadLetterStore.redriveFailed(c, dlqId, text));
    } catch (Exception recording) {
      throw new ConvergeException("Could not record the failed re-drive of converge_dlq.id " + dlqId, recording);
    }
    if (marked) {
      log.warn("Re-drive of parked message converge_dlq.id={} of group {} failed; it stays parked: {}", dlqId,
          g.group(),
          text);
    } else {
      log.debug("Re-drive of converge_dlq.id={} of group {} failed here but another instance settled it: {}", dlqId,
          g.group(), text);
    }
  }

  /** A parked message that cannot be resumed as asked (held, behind an earlier one, not parked): no retry helps. */
  static final class NotResumableException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    NotResumableException(String message) {
      super(message);
    }
  }

  /**
   * Runs parked row {@code dlqId} through the handler on {@code c}, which then holds the row, in the span of
   * {@link GroupSetup#again} ({@code how}: {@code resume} or {@code redrive}).
   */
  private Outcome resumeLocked(Connection c, long dlqId, String how) throws Exception {
    String reasonCode = DeadLetterStore.reasonCode(c, dlqId, g.group());
    if ("HELD".equals(reasonCode)) {
      throw new NotResumableException("converge_dlq.id " + dlqId + " of group " + g.group()
          + " is held behind a parked message of its key: resume or discard that one, the held ones follow");
    }
    if (EnvelopeRules.SIGNATURE_INVALID.equals(reasonCode)) {
      // a forged message never reaches the handler, whoever asks: a genuine one is published again by its producer
      throw new NotResumableException("converge_dlq.id " + dlqId + " of group " + g.group()
          + " failed its signature check and never runs: discard it (its producer publishes a genuine message again)");
    }
    if (EnvelopeCheck.REASON_CODE.equals(reasonCode)) {
      throw new NotResumableException("converge_dlq.id " + dlqId + " of group " + g.group()
          + " has an envelope the tables cannot hold: publish its payload again with a valid envelope, then discard"
          + " it");
    }
    long earlier = DeadLetterStore.earlierParked(c, dlqId, g.group());
    if (earlier != 0) {
      // two parked rows of one key (the concurrent listener, or a hold that failed and parked): resuming
      // the later one first would apply it over the gap
      throw new NotResumableException("converge_dlq.id " + dlqId + " of group " + g.group()
          + " has an earlier parked message of its key, converge_dlq.id " + earlier
          + ": resume or discard that one first");
    }
    IncomingMessage m = DeadLetterStore.lockParked(c, dlqId, g.group());
    if (m == null) {
      throw new NotResumableException("No parked message with converge_dlq.id " + dlqId + " for group " + g.group());
    }
    RejectedMessage forged = g.rules().signature(m);
    if (forged != null) {
      // parked for another reason before the handler required signatures, or marked by hand: verified here too
      throw new NotResumableException("converge_dlq.id " + dlqId + " of group " + g.group()
          + " cannot run: its signature does not verify: " + forged.reason());
    }
    String id = ResolvedId.of(g.idResolver(), m);
    return g.again(m, how, dlqId, () -> {
      DeadLetterStore.releaseParkedClaim(c, m.tenant(), g.group(), id);
      DeadLetterStore.markResumed(c, dlqId, g.clock().instant());
      if (!DedupStatements.claim(c, m.tenant(), g.group(), id, "PROCESSED", "resumed from converge_dlq " + dlqId,
          m.topic(), g.clock().instant())) {
        return Outcome.DUPLICATE;
      }
      DedupStatements.clearAttempts(c, m.tenant(), g.group(), id);
      g.handle(c, m, id);
      return Outcome.PROCESSED;
    });
  }
}
