package io.converge.pulsar.internal;

import io.converge.producer.spi.BackendContext;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves the logged Pulsar transactions of a group that no instance confirmed (its DB transaction
 * committed, then the instance died or its commit failed): commit by id while open; not found well
 * before its deadline means it was committed; otherwise the broker may have aborted it on timeout,
 * and its messages are re-published (same ids) in a new transaction. Runs on one thread.
 */
final class PulsarRecovery {

  private static final Logger LOG = LoggerFactory.getLogger(PulsarRecovery.class);
  /** Leaves the owner time to commit and confirm its own transaction. */
  private static final Duration GRACE = Duration.ofSeconds(1);

  private final BackendContext context;
  private final PulsarSettings settings;
  private final PulsarTxnStore store;
  private final TxnCoordinator coordinator;
  private final PulsarTxnBackend backend;
  private final AtomicLong open = new AtomicLong();
  private final AtomicLong oldestMillis = new AtomicLong();

  PulsarRecovery(BackendContext context, PulsarSettings settings, PulsarTxnStore store, TxnCoordinator coordinator,
      PulsarTxnBackend backend) {
    this.context = context;
    this.settings = settings;
    this.store = store;
    this.coordinator = coordinator;
    this.backend = backend;
  }

  /** Logged, unconfirmed transactions of the group at the last scan. */
  long open() {
    return open.get();
  }

  /** Age of the oldest of them at the last scan, in seconds. */
  double oldestAgeSeconds() {
    return oldestMillis.get() / 1000.0;
  }

  void scan() {
    try {
      double[] stats = store.stats(context.group());
      open.set((long) stats[0]);
      oldestMillis.set((long) (stats[1] * 1000));
      for (PulsarTxnStore.OpenTxn t : store.open(context.group(), GRACE)) {
        resolve(t);
      }
    } catch (Exception e) {
      LOG.warn("Pulsar recovery scan of group {} failed ({}); next scan in {}", context.group(), e.toString(),
          settings.recoveryInterval());
    }
  }

  private void resolve(PulsarTxnStore.OpenTxn t) throws Exception {
    Instant now = context.clock().instant();
    TxnCoordinator.Answer answer = coordinator.commit(t.most(), t.least());
    String id = "(" + t.most() + "," + t.least() + ")";
    switch (answer) {
      case COMMITTED -> {
        LOG.warn("Pulsar transaction {} of group {} was left open after its DB commit: committed by recovery", id, context.group());
        store.confirm(t.most(), t.least());
      }
      case NOT_FOUND -> {
        if (now.isBefore(t.deadline().minus(settings.commitMargin()))) {
          store.confirm(t.most(), t.least()); // only a timeout aborts after the DB commit: this one was committed
        } else {
          republish(t, id);
        }
      }
      case NO_ANSWER -> LOG.debug("Pulsar transaction {} of group {}: no answer from the coordinator; retried", id, context.group());
    }
  }

  private void republish(PulsarTxnStore.OpenTxn t, String id) throws Exception {
    List<PulsarTxnStore.Logged> messages = store.messages(t.most(), t.least());
    long timeout = settings.sendTimeout().toMillis();
    Transaction txn = backend.client().newTransaction()
        .withTransactionTimeout(settings.transactionTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .build().get(timeout, TimeUnit.MILLISECONDS);
    for (PulsarTxnStore.Logged m : messages) {
      TypedMessageBuilder<byte[]> b = backend.producer(m.topic()).newMessage(txn).properties(m.properties()).value(m.payload());
      if (m.key() != null) {
        b.key(m.key());
      }
      b.sendAsync().get(timeout, TimeUnit.MILLISECONDS);
    }
    txn.commit().get(timeout, TimeUnit.MILLISECONDS);
    store.confirm(t.most(), t.least());
    LOG.warn("Pulsar transaction {} of group {} was unresolved at its deadline: its {} messages were re-published",
        id, context.group(), messages.size());
  }
}
