package io.converge.pulsar.internal;

import io.converge.pulsar.micrometer.PulsarMeters;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.TxnBackend;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The started Pulsar backend of one producer: one client with transactions, one producer per topic, the recovery scan. */
public final class PulsarTxnBackend implements TxnBackend {

  private static final Logger LOG = LoggerFactory.getLogger(PulsarTxnBackend.class);

  private final BackendContext context;
  private final PulsarSettings settings;
  private final PulsarClient client;
  private final PulsarTxnStore store;
  private final Map<String, Producer<byte[]>> producers = new ConcurrentHashMap<>();
  private final ScheduledExecutorService scanner;
  private final java.util.concurrent.ExecutorService confirmations;
  private final java.util.concurrent.LinkedBlockingQueue<long[]> pendingConfirmations = new java.util.concurrent.LinkedBlockingQueue<>();
  private final java.util.concurrent.atomic.AtomicBoolean confirmationScheduled = new java.util.concurrent.atomic.AtomicBoolean();
  private final PulsarRecovery recovery;
  private final java.util.Set<java.util.concurrent.CompletableFuture<Void>> commitsInFlight = ConcurrentHashMap
      .newKeySet();
  private final TxnOpener opener;

  public PulsarTxnBackend(BackendContext context, PulsarSettings settings) {
    this.context = context;
    this.settings = settings;
    // build() connects to the transaction coordinator: a broker that is away (restarting, frozen) is waited for;
    // a failed build closes its own client (PulsarClientImpl shuts its threads and connections down)
    this.client = BrokerWait.upTo(settings.startupWait()).run("the producer of group " + context.group(),
        settings.serviceUrl(), () -> PulsarClient.builder()
            .serviceUrl(settings.serviceUrl())
            .enableTransaction(true)
            .operationTimeout((int) settings.sendTimeout().toMillis(), TimeUnit.MILLISECONDS)
            .connectionTimeout((int) settings.sendTimeout().toMillis(), TimeUnit.MILLISECONDS)
            // the handshake with a broker that accepts and never answers (frozen, stalled) ends after the
            // keep-alive interval, 30 s by default: one attempt of the wait then takes about the send timeout
            .keepAliveInterval((int) Math.max(1, settings.sendTimeout().toSeconds()), TimeUnit.SECONDS)
            .build());
    this.opener = new TxnOpener(() -> client.newTransaction()
        .withTransactionTimeout(settings.transactionTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .build(), settings, context.localTransactionTimeout(), context.clock());
    this.store = new PulsarTxnStore(context.dataSource());
    this.recovery = new PulsarRecovery(this, new TxnCoordinator(client, settings.sendTimeout()));
    this.scanner = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "converge-pulsar-recovery-" + context.group());
      t.setDaemon(true);
      return t;
    });
    // confirmations take a pooled connection of their own: never on the committing thread, which may still hold
    // its transaction's connection (Spring's afterCompletion runs before the connection is released)
    this.confirmations = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "converge-pulsar-confirm-" + context.group());
      t.setDaemon(true);
      return t;
    });
    if (settings.meterRegistry() != null) {
      PulsarMeters.register(settings.meterRegistry(), context.group(), recovery, PulsarRecovery::open,
          PulsarRecovery::oldestAgeSeconds, PulsarRecovery::parked);
    }
    long every = settings.recoveryInterval().toMillis();
    scanner.scheduleWithFixedDelay(recovery::scan, 0, every, TimeUnit.MILLISECONDS);
  }

  BackendContext context() {
    return context;
  }

  PulsarSettings settings() {
    return settings;
  }

  PulsarTxnStore store() {
    return store;
  }

  /**
   * Opens a Pulsar transaction with the settings' transaction timeout, waiting at most the send timeout (one that
   * answers later is aborted).
   */
  Transaction newTransaction() throws Exception {
    return opener.openNow().transaction();
  }

  /** Opens the transactions of units, ahead of them when the timeouts leave room. */
  TxnOpener opener() {
    return opener;
  }

  /** Starts the send of one message in {@code txn}: {@code key} (when not null), properties and payload. */
  CompletableFuture<MessageId> sendAsync(Transaction txn, String topic, String key, Map<String, String> properties,
      byte[] payload) throws Exception {
    TypedMessageBuilder<byte[]> b = producer(topic).newMessage(txn).properties(properties)
        .value(payload);
    if (key != null) {
      b.key(key);
    }
    return b.sendAsync();
  }

  /** The producer of {@code topic}, created once; transactional sends need the send timeout off. */
  Producer<byte[]> producer(String topic) throws Exception {
    Producer<byte[]> p = producers.get(topic);
    if (p != null) {
      return p;
    }
    Producer<byte[]> created = client.newProducer()
        .topic(topic)
        .sendTimeout(0, TimeUnit.SECONDS)
        .enableBatching(false)
        .createAsync()
        .get(settings.sendTimeout().toMillis(), TimeUnit.MILLISECONDS);
    Producer<byte[]> raced = producers.putIfAbsent(topic, created);
    if (raced != null) {
      created.closeAsync();
      return raced;
    }
    return created;
  }

  /**
   * Sends the commit of {@code txn}, whose unit of work the database has committed, without waiting
   * for it: on success its log row is confirmed; on failure it is left to recovery (commit by id before
   * the deadline, re-publish after). {@link #close()} waits for the commits in flight.
   */
  void commitInBackground(org.apache.pulsar.client.api.transaction.Transaction txn) {
    org.apache.pulsar.client.api.transaction.TxnID id = txn.getTxnID();
    java.util.concurrent.CompletableFuture<Void> commit;
    try {
      commit = txn.commit();
    } catch (RuntimeException e) {
      LOG.warn("Could not commit Pulsar transaction {} ({}); recovery will resolve it", id, e.toString());
      return;
    }
    commitsInFlight.add(commit);
    commit.whenComplete((v, e) -> {
      commitsInFlight.remove(commit);
      if (e == null) {
        confirmLater(id.getMostSigBits(), id.getLeastSigBits());
      } else {
        LOG.warn("Could not commit Pulsar transaction {} ({}); recovery will resolve it", id, e.toString());
      }
    });
  }

  /**
   * Queues the log row of a committed transaction for deletion by the confirmation thread, which
   * deletes what is queued in one statement; a row left behind (crash, database down) is found by the
   * recovery scan, which sees the transaction gone and confirms it then.
   */
  void confirmLater(long most, long least) {
    if (!confirmations.isShutdown()) {
      pendingConfirmations.add(new long[]{most, least});
      if (confirmationScheduled.compareAndSet(false, true)) {
        try {
          confirmations.execute(this::confirmPending);
        } catch (java.util.concurrent.RejectedExecutionException e) {
          LOG.debug("Backend of group {} closing: Pulsar transactions are left to recovery", context.group());
        }
      }
    }
  }

  private void confirmPending() {
    confirmationScheduled.set(false);
    java.util.List<long[]> batch = new java.util.ArrayList<>();
    while (pendingConfirmations.drainTo(batch, 1000) > 0) {
      long[] most = new long[batch.size()];
      long[] least = new long[batch.size()];
      for (int i = 0; i < batch.size(); i++) {
        most[i] = batch.get(i)[0];
        least[i] = batch.get(i)[1];
      }
      try {
        store.confirmAll(most, least);
      } catch (Exception e) {
        LOG.debug("Confirming {} Pulsar transactions of group {} failed ({}); recovery will confirm them", batch.size(),
            context.group(), e.toString());
      }
      batch.clear();
    }
  }

  @Override
  public BackendTransaction begin() {
    return new PulsarTxnTransaction(this, context, settings);
  }

  @Override
  public void close() {
    opener.close();
    try {
      java.util.concurrent.CompletableFuture
          .allOf(commitsInFlight.toArray(new java.util.concurrent.CompletableFuture<?>[0]))
          .get(settings.sendTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn("Backend of group {} closing with Pulsar commits unanswered ({}); recovery will resolve them",
          context.group(),
          e.toString());
    }
    confirmations.shutdown();
    try {
      confirmations.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    scanner.shutdownNow();
    try {
      scanner.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    // the producers flushed and closed before the client is let go (PulsarClients: its own close waits 2 s)
    try {
      CompletableFuture.allOf(producers.values().stream().map(Producer::closeAsync).toArray(CompletableFuture[]::new))
          .get(settings.sendTimeout().toMillis() + 5_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.debug("Closing the Pulsar producers of group {}: {}", context.group(), e.toString());
    }
    PulsarClients.closeInBackground(client, LOG, "group " + context.group());
  }

  Duration sendTimeout() {
    return settings.sendTimeout();
  }
}
