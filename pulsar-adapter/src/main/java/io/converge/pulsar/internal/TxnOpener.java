package io.converge.pulsar.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens the Pulsar transactions of a backend: for a unit of work, one opened ahead by an earlier unit when a fresh
 * one is ready, else one opened now; either way the next one is asked for at once, so that the coordinator's
 * round trip is off the units' path. Every transaction asked for and not used (stale, failed, or answered after
 * its caller stopped waiting: the coordinator may still open it) is aborted once it opens, however late, not left
 * open until the coordinator's timeout; {@link #close} waits for those aborts. Thread-safe.
 */
final class TxnOpener {

  private static final Logger LOG = LoggerFactory.getLogger(TxnOpener.class);
  /** At most this many transactions are opened ahead of their units. */
  private static final int MAX_READY = 64;
  /** A transaction opened ahead is used within this (or a tenth of the transaction timeout), else aborted. */
  private static final Duration MAX_READY_AGE = Duration.ofSeconds(5);

  private final Supplier<CompletableFuture<Transaction>> open;
  private final PulsarSettings settings;
  private final Duration localTransactionTimeout;
  private final Clock clock;
  private final Queue<Prefetched> ready = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean closing = new AtomicBoolean();
  /** The aborts of unused transactions under way: {@link #close} waits for them before the client closes. */
  private final Set<CompletableFuture<Void>> aborts = ConcurrentHashMap.newKeySet();

  /**
   * @param open asks the coordinator for a transaction with the settings' transaction timeout
   * @param localTransactionTimeout the producer's, which a transaction opened ahead must leave room for
   */
  TxnOpener(Supplier<CompletableFuture<Transaction>> open, PulsarSettings settings, Duration localTransactionTimeout,
      Clock clock) {
    this.open = open;
    this.settings = settings;
    this.localTransactionTimeout = localTransactionTimeout;
    this.clock = clock;
  }

  /**
   * A transaction opened now, waiting at most the send timeout; one that fails or times out is aborted if it
   * opens after all.
   */
  Prefetched openNow() throws Exception {
    Prefetched now = ask();
    try {
      now.txn().get(settings.sendTimeout().toMillis(), TimeUnit.MILLISECONDS);
      return now;
    } catch (Exception e) {
      abortQuietly(now);
      throw e;
    }
  }

  /** A transaction for a unit of work: one opened ahead when a fresh one is ready, else {@link #openNow()}. */
  Prefetched openForUnit() throws Exception {
    Prefetched p;
    while ((p = ready.poll()) != null && !fresh(p)) {
      abortQuietly(p);
    }
    if (p != null) {
      try {
        p.txn().get(settings.sendTimeout().toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        abortQuietly(p);
        throw e;
      } catch (Exception e) {
        abortQuietly(p);
        LOG.debug("A Pulsar transaction opened ahead failed ({}); opening one now", e.toString());
        p = null;
      }
    }
    if (p != null) {
      prefetch(); // never throws: the unit keeps p
      return p;
    }
    // none ready (the first unit, or a pause longer than a fresh one lives): open it now, then the next
    Prefetched now = openNow();
    prefetch();
    return now;
  }

  /**
   * Asks for a transaction. Never throws: a client that throws instead of answering (closed, coordinator not
   * ready) gives a failed transaction, handled as one whose open failed.
   */
  private Prefetched ask() {
    Instant asked = clock.instant();
    long askedNanos = System.nanoTime();
    CompletableFuture<Transaction> txn;
    try {
      txn = open.get();
    } catch (RuntimeException e) {
      txn = CompletableFuture.failedFuture(e);
    }
    return new Prefetched(txn, asked, askedNanos);
  }

  private void prefetch() {
    if (closing.get() || ready.size() >= MAX_READY || slackNanos() <= 0) {
      return;
    }
    Prefetched p = ask();
    ready.add(p);
    if (closing.get() && ready.remove(p)) {
      abortQuietly(p);
    }
  }

  /**
   * Whether {@code p} is young enough and did not fail. Its deadline counts from when it was asked for, so its
   * age is taken from the unit's window: it may only use the slack between the transaction timeout and the
   * local-transaction timeout plus the commit margin, so that a unit within its local timeout never reaches
   * the Pulsar deadline's margin (with the default timeout, which is exactly local + margin, nothing is left:
   * every unit then opens its own transaction); and at most a tenth of the timeout or 5 s.
   */
  private boolean fresh(Prefetched p) {
    long slack = slackNanos();
    long maxAge = Math.min(Math.min(settings.transactionTimeout().toNanos() / 10, MAX_READY_AGE.toNanos()), slack);
    return System.nanoTime() - p.askedNanos() < maxAge && !p.txn().isCompletedExceptionally();
  }

  /** The transaction timeout beyond the local-transaction timeout and the commit margin: what an age may use. */
  private long slackNanos() {
    return settings.transactionTimeout().minus(settings.commitMargin()).minus(localTransactionTimeout).toNanos();
  }

  /**
   * Aborts an unused transaction once it is open, however late it opens; {@link #close} waits for these aborts,
   * each at most the send timeout after it was asked for.
   */
  private void abortQuietly(Prefetched p) {
    CompletableFuture<Void> abort = new CompletableFuture<>();
    aborts.add(abort);
    abort.orTimeout(settings.sendTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .whenComplete((v, e) -> aborts.remove(abort));
    p.txn().whenComplete((txn, opening) -> {
      if (txn == null) {
        abort.complete(null); // never opened: nothing to abort
        return;
      }
      txn.abort().whenComplete((v, e) -> {
        if (e != null) {
          LOG.debug("Abort of an unused Pulsar transaction failed ({}); it times out on the broker", e.toString());
        }
        abort.complete(null);
      });
    });
  }

  /** Tests: a transaction opened ahead, as {@link #openForUnit()} leaves them. */
  void addReady(Prefetched p) {
    ready.add(p);
  }

  /** Tests: the next transaction opened ahead, or null. */
  Prefetched peekReady() {
    return ready.peek();
  }

  /**
   * Opens no more ahead, aborts those opened ahead, and waits for the aborts under way (each bounded by the send
   * timeout): the client must not close under them.
   */
  void close() {
    closing.set(true);
    for (Prefetched p; (p = ready.poll()) != null;) {
      abortQuietly(p);
    }
    try {
      CompletableFuture.allOf(aborts.toArray(new CompletableFuture<?>[0]))
          .get(settings.sendTimeout().toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.debug("Closing with unused Pulsar transactions not aborted ({}); they time out on the broker",
          e.toString());
    }
  }

  /**
   * A transaction asked for (ahead of its unit, or now).
   *
   * @param txn the open transaction (once completed)
   * @param asked when it was asked for: its deadline counts from then
   */
  record Prefetched(CompletableFuture<Transaction> txn, Instant asked, long askedNanos) {

    /** The transaction; only once {@link #openForUnit()} or {@link #openNow()} returned it (completed). */
    Transaction transaction() {
      return txn.join();
    }
  }
}
