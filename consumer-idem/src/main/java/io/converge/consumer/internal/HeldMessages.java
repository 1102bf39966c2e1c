package io.converge.consumer.internal;

import io.converge.core.internal.Text;
import io.converge.consumer.FailureKind;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.core.ConvergeException;
import java.sql.Connection;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The per-key hold of one handler: a message whose key has a parked row is parked behind it (reason code
 * {@code HELD}); a held row that heads its key (no earlier parked row: the one before was resumed or
 * discarded) runs like a new delivery, in id order. A held row that fails for good when released becomes a
 * parked head at its own place, so the rows behind it stay held; one that fails for a technical reason is retried
 * after the policy's backoff at a later round, the round going on with the other keys meanwhile
 * ({@link RetrySchedule}). Thread-safe: all state is in the database (but for the backoffs), and a release locks
 * its row.
 */
final class HeldMessages {

  /** The reason of a held row, shown by {@code converge dlq list}. */
  static final String REASON = "behind a parked message of this key";

  private static final Logger log = LoggerFactory.getLogger(HeldMessages.class);
  private static final int BATCH = 100;

  private final GroupSetup g;
  private final FailureRecorder failures;
  private final RetrySchedule retries;

  HeldMessages(GroupSetup g, FailureRecorder failures) {
    this.g = g;
    this.failures = failures;
    this.retries = new RetrySchedule(g.clock());
  }

  /**
   * Parks {@code message} behind the parked row of its key, with a {@code HELD} claim so that a redelivery
   * of it is a duplicate. Throws when it could not be recorded (the caller does not ack).
   */
  Outcome hold(IncomingMessage message, String tenant, String id) throws Exception {
    Outcome outcome = g.tx().inTransaction(c -> {
      if (!DedupStatements.claim(c, tenant, g.group(), id, "HELD", REASON, message.topic(), g.clock().instant())) {
        return Outcome.DUPLICATE;
      }
      long dlqId = DeadLetterStore.insertDlq(c, g.group(), message, id, "HELD", REASON, 0, g.clock().instant());
      log.warn("Message {} of group {} (key {}) held as converge_dlq.id={}: {}", id, g.group(), message.brokerKey(),
          dlqId, REASON);
      return Outcome.HELD;
    });
    return outcome;
  }

  /**
   * Runs every held row on {@code topics} that heads its key, oldest first, until none is left: the rows of the
   * group's other topics are other handlers' (issue 31.4). A page that ran nothing (its heads all backing off) is
   * followed by the next one, past its last id; a page that ran some is listed again from the start (a release
   * makes the next row of its key a head). @return how many ran
   */
  int releaseAll(String[] topics) {
    int released = 0;
    long after = 0;
    Set<Long> seen = new HashSet<>();
    while (true) {
      List<Long> ids;
      long from = after;
      try {
        ids = g.tx().inTransaction(c -> DeadLetterStore.releasable(c, g.group(), topics, from, BATCH));
      } catch (Exception e) {
        throw new ConvergeException("Could not list the held messages of group " + g.group(), e);
      }
      int before = released;
      seen.addAll(ids);
      for (long dlqId : ids) {
        if (release(dlqId, topics) != null) {
          released++;
        }
      }
      if (released != before) {
        after = 0;
      } else if (ids.size() == BATCH) {
        after = ids.get(ids.size() - 1);
      } else {
        retries.retainOnly(seen); // every head was listed: forget the backoffs of rows gone meanwhile
        return released;
      }
    }
  }

  /**
   * Runs held row {@code dlqId} when it still heads its key; null when it does not (or no longer) exist, when it
   * backs off after a technical failure, or when it failed so and is retried at a later round.
   */
  private Outcome release(long dlqId, String[] topics) {
    if (retries.waiting(dlqId)) {
      return null;
    }
    IncomingMessage[] ran = new IncomingMessage[1];
    try {
      Outcome outcome = g.tx().inTransaction(c -> {
        IncomingMessage m = DeadLetterStore.lockHeldHead(c, dlqId, g.group(), topics);
        if (m == null) {
          return null;
        }
        ran[0] = m;
        String id = ResolvedId.of(g.idResolver(), m);
        return g.again(m, "release", dlqId, () -> {
          DeadLetterStore.markResumed(c, dlqId, g.clock().instant());
          DeadLetterStore.releaseHeldClaim(c, m.tenant(), g.group(), id);
          if (!DedupStatements.claim(c, m.tenant(), g.group(), id, "PROCESSED",
              "released from converge_dlq " + dlqId, m.topic(), g.clock().instant())) {
            return Outcome.DUPLICATE;
          }
          DedupStatements.clearAttempts(c, m.tenant(), g.group(), id);
          g.handle(c, m, id);
          return Outcome.PROCESSED;
        });
      });
      retries.settled(dlqId);
      if (outcome != null) {
        log.info("Held message converge_dlq.id={} of group {} released: {}", dlqId, g.group(), outcome);
        g.metrics().outcome(g.group(), ran[0].topic(), outcome);
      }
      return outcome;
    } catch (Exception e) {
      IncomingMessage m = ran[0];
      FailureKind kind = g.classifier().classify(e);
      if (m == null || kind == FailureKind.UNAVAILABLE) {
        throw new ConvergeException("Releasing held converge_dlq.id " + dlqId + " of group " + g.group()
            + " failed; it stays held and is tried again", e);
      }
      String id = ResolvedId.of(g.idResolver(), m);
      if (e instanceof RejectedMessage rejected) {
        retries.settled(dlqId); // its schema is not read here: it heads its key, parked, until re-driven
        return failures.run(m, id, () -> g.tx().inTransaction(c -> parkRejectedInPlace(c, dlqId, m, id, rejected)));
      }
      g.metrics().failure(g.group(), m.topic(), kind);
      Outcome outcome = switch (kind) {
        case BUSINESS -> failures.run(m, id, () -> g.tx().inTransaction(c -> {
          if (DeadLetterStore.lockHeldHead(c, dlqId, g.group(), topics) == null) {
            return null;
          }
          DeadLetterStore.markResumed(c, dlqId, g.clock().instant());
          return failures.markBusinessFailure(c, m, m.tenant(), id, e);
        }));
        case MONEY_ANOMALY -> parkInPlace(dlqId, m, id, "TICKETED", "MONEY_ANOMALY", e, 0);
        case TECHNICAL -> {
          String error = Text.abbreviate(e.toString(), FailureRecorder.MAX_ERROR_TEXT);
          int attempts = failures.run(m, id, () -> g.tx().inTransaction(
              c -> DedupStatements.recordAttempt(c, m.tenant(), g.group(), id, error, g.clock().instant())));
          if (attempts >= g.policy().maxAttempts()) {
            yield parkInPlace(dlqId, m, id, "DEAD_LETTERED", "RETRIES_EXHAUSTED", e, attempts);
          }
          Duration delay = g.policy().delay(attempts, ThreadLocalRandom.current().nextDouble());
          retries.retryLater(dlqId, attempts, delay);
          log.debug("Held message {} of group {} failed when released (attempt {}/{}), retried in {} at a later "
              + "round: {}", id, g.group(), attempts, g.policy().maxAttempts(), delay, error);
          yield null;
        }
        case UNAVAILABLE -> throw new IllegalStateException("handled above");
      };
      if (outcome != null || kind != FailureKind.TECHNICAL) {
        retries.settled(dlqId); // not one that backs off
      }
      if (outcome != null) {
        g.metrics().outcome(g.group(), m.topic(), outcome);
      }
      return outcome;
    }
  }

  /** A released row whose envelope the rules refuse becomes the parked head of its key, at its place; no ticket. */
  private Outcome parkRejectedInPlace(Connection c, long dlqId, IncomingMessage m, String id,
      RejectedMessage rejected) throws Exception {
    String reason = Text.abbreviate(rejected.reason(), FailureRecorder.MAX_ERROR_TEXT);
    if (!DeadLetterStore.heldToParked(c, dlqId, rejected.code(), reason, 0)) {
      return null;
    }
    DedupStatements.setOutcome(c, m.tenant(), g.group(), id, "DEAD_LETTERED", rejected.code() + ": " + reason);
    DedupStatements.clearAttempts(c, m.tenant(), g.group(), id);
    log.warn("Held message {} of group {} parked ({}) when released as converge_dlq.id={}, never run: {}", id,
        g.group(), rejected.code(), dlqId, reason);
    g.metrics().parked(g.group(), m.topic(), rejected.code());
    g.metrics().outcome(g.group(), m.topic(), Outcome.DEAD_LETTERED);
    return Outcome.DEAD_LETTERED;
  }

  /** A released row that failed for good becomes the parked head of its key, at its own place. */
  private Outcome parkInPlace(long dlqId, IncomingMessage m, String id, String outcome, String reasonCode,
      Exception failure, int attempts) {
    String reason = Text.abbreviate(failure.toString(), FailureRecorder.MAX_ERROR_TEXT);
    return failures.run(m, id, () -> g.tx().inTransaction(c -> {
      if (!DeadLetterStore.heldToParked(c, dlqId, reasonCode, reason, attempts)) {
        return null;
      }
      DedupStatements.setOutcome(c, m.tenant(), g.group(), id, outcome, reasonCode + ": " + reason);
      DedupStatements.clearAttempts(c, m.tenant(), g.group(), id);
      long ticketId = DeadLetterStore.insertTicket(c, g.group(), m, id, dlqId, reasonCode, reason, g.clock().instant());
      log.error("Held message {} of group {} failed when released and is parked ({}) as converge_dlq.id={}, manual "
          + "converge_ticket.id={}: {}", id, g.group(), reasonCode, dlqId, ticketId, reason);
      return Outcome.valueOf(outcome);
    }));
  }
}
