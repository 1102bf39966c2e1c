package io.converge.pulsar.internal;

import io.converge.core.tracing.MessageSpan;
import io.converge.core.ConvergeException;
import io.converge.core.internal.Backoff;
import io.converge.producer.spi.BackendContext;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves the logged Pulsar transactions of a group that no instance confirmed (its DB transaction
 * committed, then the instance died or its commit failed): commit by id while open; not found well
 * before its deadline means it was committed; otherwise the broker may have aborted it on timeout,
 * and its messages are re-published (same ids) in a new transaction.
 *
 * <p>Each transaction is claimed ({@code FOR UPDATE SKIP LOCKED}) and resolved in a DB transaction of
 * its own, so two instances never re-publish the same one. A failed attempt makes it due again after
 * an exponential backoff (the recovery interval, doubled per attempt, at most 5 min) and never stops the
 * scan; a transaction Pulsar refuses ({@link PulsarErrors#isRefusal}) is parked with its reason once it
 * has failed the maximum attempts, an outage never parks. Both {@link LogLayout}s are scanned: the units this
 * version logs, and the transactions an earlier version logged in its own tables (drained after an upgrade, also
 * while instances of that version still run). Runs on one thread.
 */
final class PulsarRecovery {

  private static final Logger LOG = LoggerFactory.getLogger(PulsarRecovery.class);
  /** Leaves the owner time to commit and confirm its own transaction. */
  private static final Duration GRACE = Duration.ofSeconds(1);
  private static final Duration MAX_BACKOFF = Duration.ofMinutes(5);
  /** Transactions of each layout resolved per scan at most: the rest wait for the next one. */
  private static final int PER_SCAN = 100;
  /** The tables a scan claims from, in order: what an earlier version logged, then this version's units. */
  private static final List<LogLayout> RECOVERY_ORDER = List.of(LogLayout.TXN, LogLayout.UNIT);

  private final BackendContext context;
  private final PulsarSettings settings;
  private final PulsarTxnStore store;
  private final TxnCoordinator coordinator;
  private final PulsarTxnBackend backend;
  private final Backoff backoff;
  /** The group's transactions at the last scan, read by the gauges. */
  private volatile Stats stats = new Stats(0, 0, 0);

  /** Open (logged, unconfirmed, unparked) and parked transactions, and the age of the oldest open one. */
  private record Stats(long open, long oldestMillis, long parked) {
  }

  /** The recovery of {@code backend}'s group, asking {@code coordinator} about transactions by id. */
  PulsarRecovery(PulsarTxnBackend backend, TxnCoordinator coordinator) {
    this.backend = backend;
    this.coordinator = coordinator;
    this.context = backend.context();
    this.settings = backend.settings();
    this.store = backend.store();
    this.backoff = backoff(settings.recoveryInterval());
  }

  /** Logged, unconfirmed, unparked transactions of the group at the last scan. */
  long open() {
    return stats.open();
  }

  /** Age of the oldest of them at the last scan, in seconds. */
  double oldestAgeSeconds() {
    return stats.oldestMillis() / 1000.0;
  }

  /** Parked transactions of the group at the last scan. */
  long parked() {
    return stats.parked();
  }

  void scan() {
    try {
      // each table with a budget of its own: a backlog in one never holds back the other
      for (LogLayout layout : RECOVERY_ORDER) {
        for (int i = 0; i < PER_SCAN && resolveNext(layout); i++) {
          // one claimed transaction per DB transaction
        }
      }
      double[] now = store.stats(context.group());
      stats = new Stats((long) now[0], (long) (now[1] * 1000), (long) now[2]);
    } catch (Exception e) {
      LOG.warn("Pulsar recovery scan of group {} failed ({}); next scan in {}", context.group(), e.toString(),
          settings.recoveryInterval());
    }
  }

  /** Claims the next due transaction logged in {@code layout} and resolves it; false when none is due. */
  private boolean resolveNext(LogLayout layout) throws SQLException {
    try (Connection c = store.begin()) {
      try {
        PulsarTxnStore.OpenTxn t = PulsarTxnStore.claim(c, layout, context.group(), GRACE);
        if (t == null) {
          c.commit();
          return false;
        }
        resolve(c, t);
        c.commit();
        return true;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  private void resolve(Connection c, PulsarTxnStore.OpenTxn t) throws SQLException {
    String id = "(" + t.most() + "," + t.least() + ")";
    switch (coordinator.commit(t.most(), t.least())) {
      case COMMITTED -> {
        LOG.warn("Pulsar transaction {} of group {} was left open after its DB commit: committed by recovery", id,
            context.group());
        PulsarTxnStore.confirm(c, t);
      }
      case NOT_FOUND -> {
        // the database's clock, as the deadline was written: this instance's own clock may be off
        if (PulsarTxnStore.beforeDeadline(c, t, settings.commitMargin())) {
          PulsarTxnStore.confirm(c, t); // only a timeout aborts after the DB commit: this one was committed
        } else {
          int sent;
          try {
            sent = republish(c, t);
          } catch (Exception e) {
            failed(c, t, id, e);
            return;
          }
          PulsarTxnStore.confirm(c, t);
          LOG.warn(
              "Pulsar transaction {} of group {} was unresolved at its deadline: its {} messages were re-published",
              id, context.group(), sent);
        }
      }
      case NO_ANSWER ->
        failed(c, t, id, new IllegalStateException("no answer from the Pulsar transaction coordinator"));
    }
  }

  /** Sends the logged messages again in a new Pulsar transaction and commits it; returns how many. */
  private int republish(Connection c, PulsarTxnStore.OpenTxn t) throws Exception {
    List<PulsarTxnStore.Logged> messages = PulsarTxnStore.messages(c, t);
    long timeout = settings.sendTimeout().toMillis();
    Transaction txn = backend.newTransaction();
    try {
      for (PulsarTxnStore.Logged m : messages) {
        // the logged properties hold the creation context: the re-published message continues the original trace
        try (MessageSpan span = context.tracing().send("pulsar", m.topic(), m.id(), m.properties())) {
          try {
            backend.sendAsync(txn, m.topic(), m.key(), m.properties(), m.payload()).get(timeout, TimeUnit.MILLISECONDS);
          } catch (InterruptedException e) {
            span.failed(e);
            throw e;
          } catch (Exception e) {
            span.failed(e);
            throw PulsarErrors.classify(e, m.id(), m.topic());
          }
        }
      }
      txn.commit().get(timeout, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      txn.abort(); // not awaited: a broker that does not answer aborts it on its timeout
      throw e;
    }
    return messages.size();
  }

  /** Counts a failed attempt: parks a refused transaction at the maximum, else makes it due after the backoff. */
  private void failed(Connection c, PulsarTxnStore.OpenTxn t, String id, Exception e) throws SQLException {
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    int attempts = t.attempts() + 1;
    String reason = e instanceof ConvergeException ? e.getMessage() : e.toString();
    if (PulsarErrors.isRefusal(e) && attempts >= settings.recoveryMaxAttempts()) {
      PulsarTxnStore.park(c, t, reason);
      LOG.error("Pulsar transaction {} of group {} parked after {} attempts, its messages undelivered: {}", id,
          context.group(), attempts, reason);
      return;
    }
    Duration delay = backoff.ceiling(attempts);
    PulsarTxnStore.retryLater(c, t, delay, reason);
    LOG.warn("Recovery of Pulsar transaction {} of group {} failed (attempt {}): {}; retried in {}", id,
        context.group(),
        attempts, reason, delay);
  }

  /**
   * The delay before a failed transaction is due again: the recovery interval doubled per attempt, at most 5 min (or
   * the interval, when that is longer); no jitter, the scan runs on one thread per group.
   */
  static Backoff backoff(Duration recoveryInterval) {
    Duration cap = MAX_BACKOFF.compareTo(recoveryInterval) > 0 ? MAX_BACKOFF : recoveryInterval;
    return Backoff.withJitter(recoveryInterval, cap, 2.0, 0.0, null);
  }
}
