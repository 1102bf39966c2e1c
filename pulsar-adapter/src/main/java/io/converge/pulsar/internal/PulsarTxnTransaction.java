package io.converge.pulsar.internal;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.LateCommitFencedException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.CommitWrite;
import io.converge.producer.internal.CrashPoints;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.api.transaction.TxnID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The Pulsar transaction of one unit of work, opened at its first publish. Used by one thread. */
final class PulsarTxnTransaction implements BackendTransaction {

  private static final Logger LOG = LoggerFactory.getLogger(PulsarTxnTransaction.class);

  private final PulsarTxnBackend backend;
  private final BackendContext context;
  private final PulsarSettings settings;
  private Transaction txn;
  private Instant deadline;
  private final List<Pending> pending = new ArrayList<>();

  PulsarTxnTransaction(PulsarTxnBackend backend, BackendContext context, PulsarSettings settings) {
    this.backend = backend;
    this.context = context;
    this.settings = settings;
  }

  /** A message whose send is under way, and what to log once it is acknowledged. */
  private record Pending(OutgoingMessage message, Map<String, String> properties, CompletableFuture<MessageId> send,
      long startNanos) {
  }

  /**
   * Opens the Pulsar transaction at the first message and starts the send; the sends of one unit are
   * pipelined, and {@link #beforeCommit} awaits their acknowledgements; {@link #commitWrite} logs them.
   */
  @Override
  public void publish(OutgoingMessage m, Connection connection) {
    send(m, m.envelope(context.group(), context.clock().millis()));
  }

  private void send(OutgoingMessage m, Map<String, String> props) {
    long start = System.nanoTime();
    try {
      if (txn == null) {
        TxnOpener.Prefetched opened = backend.opener().openForUnit();
        txn = opened.transaction();
        deadline = opened.asked().plus(settings.transactionTimeout());
      }
      pending.add(new Pending(m, props, backend.sendAsync(txn, m.topic(), m.key(), props, m.payload()), start));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BrokerUnavailableException("Interrupted while sending message " + m.id() + " to Pulsar", m.id(), e);
    } catch (Exception e) {
      throw PulsarErrors.classify(e, m.id(), m.topic());
    }
  }

  /**
   * Awaits every send and checks the transaction's deadline; the log row follows in {@link #commitWrite()},
   * with the DB commit.
   */
  @Override
  public void beforeCommit(Connection connection) throws Exception {
    if (pending.isEmpty()) {
      return;
    }
    long until = System.nanoTime() + settings.sendTimeout().toNanos();
    for (Pending p : pending) {
      try {
        p.send().get(Math.max(1, until - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new BrokerUnavailableException("Interrupted while sending message " + p.message().id() + " to Pulsar",
            p.message().id(), e);
      } catch (Exception e) {
        throw PulsarErrors.classify(e, p.message().id(), p.message().topic());
      }
      context.metrics().sent(Duration.ofNanos(System.nanoTime() - p.startNanos()));
    }
    CrashPoints.pass(CrashPoints.Point.AFTER_BROKER_PREPARE);
    // a DB commit whose Pulsar transaction may already be aborted on timeout would lose the messages
    if (context.clock().instant().isAfter(deadline.minus(settings.commitMargin()))) {
      String last = pending.get(pending.size() - 1).message().id();
      throw new LateCommitFencedException(
          "Message " + last + " of group " + context.group() + ": its Pulsar transaction "
              + txn.getTxnID() + " is too close to its timeout (deadline " + deadline
              + "); the unit of work is rolled back",
          last, null);
    }
  }

  /**
   * The transaction's log row, holding its messages: one statement, sent with the commit; null when a savepoint
   * rollback left nothing to send.
   */
  @Override
  public CommitWrite commitWrite() {
    if (pending.isEmpty()) {
      return null;
    }
    TxnID id = txn.getTxnID();
    List<PulsarTxnStore.Logged> logged = new ArrayList<>(pending.size());
    for (Pending p : pending) {
      OutgoingMessage m = p.message();
      logged.add(new PulsarTxnStore.Logged(m.id(), m.topic(), m.key(), p.properties(), m.payload()));
    }
    return PulsarTxnStore.logWrite(id.getMostSigBits(), id.getLeastSigBits(), context.group(), deadline,
        context.clock(), logged);
  }

  /**
   * A Pulsar transaction cannot take a send back: the current one is aborted (the messages published
   * after the savepoint go with it, and never reach a consumer), and the first {@code kept} are sent
   * again, in order and with the same properties (message id, created-at), in a new transaction whose
   * deadline replaces the old one. The aborted transaction was never logged, so recovery cannot commit it.
   */
  @Override
  public void rollbackToSavepoint(int kept) {
    if (kept < 0 || kept > pending.size()) {
      throw new IllegalArgumentException("kept must be between 0 and " + pending.size() + ", but was " + kept);
    }
    if (kept == pending.size()) {
      return; // nothing was published after the savepoint
    }
    List<Pending> before = new ArrayList<>(pending);
    Transaction aborted = txn;
    Instant oldDeadline = deadline;
    String rolledBack = pending.get(kept).message().id();
    try {
      aborted.abort().get(settings.sendTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BrokerUnavailableException("Interrupted while aborting Pulsar transaction " + aborted.getTxnID()
          + " for a savepoint rollback", rolledBack, e);
    } catch (Exception e) {
      // never committed and never logged: the broker aborts it on its timeout
      LOG.debug("Abort of Pulsar transaction {} after a savepoint rollback failed ({}); it times out on the broker",
          aborted.getTxnID(), e.toString());
    }
    // the old state stays until the re-send succeeded: a failure leaves the unit unable to commit, and
    // its rollback aborts the old transaction again (harmless) and the new one, if it was opened
    pending.clear();
    txn = null;
    deadline = null;
    try {
      for (Pending p : before.subList(0, kept)) {
        send(p.message(), p.properties());
      }
    } catch (RuntimeException e) {
      Transaction opened = txn;
      if (opened != null) {
        opened.abort().whenComplete((v, x) -> {
          if (x != null) {
            LOG.debug("Abort of Pulsar transaction {} failed ({}); it times out on the broker", opened.getTxnID(),
                x.toString());
          }
        });
      }
      pending.clear();
      pending.addAll(before);
      txn = aborted;
      deadline = oldDeadline;
      throw e;
    }
    LOG.debug("Savepoint rollback of group {}: Pulsar transaction {} aborted, {} message(s) re-sent in {}",
        context.group(),
        aborted.getTxnID(), kept, txn == null ? "none" : txn.getTxnID());
  }

  @Override
  public void afterCommit() {
    if (txn == null) {
      return;
    }
    // the DB commit made the unit of work a fact (the log row): the Pulsar commit completes in the
    // background, and recovery commits or re-publishes it if it fails or this process dies first
    backend.commitInBackground(txn);
  }

  @Override
  public void afterRollback() {
    if (txn == null) {
      return;
    }
    TxnID id = txn.getTxnID();
    // not awaited: a broker that does not answer aborts the transaction on its timeout anyway
    txn.abort().whenComplete((v, e) -> {
      if (e != null) {
        LOG.debug("Abort of Pulsar transaction {} failed ({}); it times out on the broker", id, e.toString());
      }
    });
  }
}
