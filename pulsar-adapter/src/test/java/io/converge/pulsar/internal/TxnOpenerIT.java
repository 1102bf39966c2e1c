package io.converge.pulsar.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.core.BrokerUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Review of the opener: asking the client for a transaction may throw instead of returning a failed future (client
 * closed, coordinator not ready). Such a failure is treated as a failed open: the unit keeps the good transaction
 * opened ahead for it, the one opened on the spot is not leaked, and every transaction the opener asked for is
 * either handed to a unit or aborted. Real coordinator of the embedded Pulsar; only the throw is provoked.
 */
@ExtendWith(PulsarExtension.class)
class TxnOpenerIT {

  /** A slack of 5 s (20 - 5 margin - 10 local): transactions are opened ahead. */
  private static PulsarSettings ahead(EmbeddedPulsar pulsar) {
    return new PulsarSettings(pulsar.serviceUrl(), Duration.ofSeconds(20), Duration.ofSeconds(5), Duration.ofSeconds(3),
        Duration.ofMillis(300), null, 3);
  }

  @Test
  void aSynchronousFailureToOpenTheNextOneAheadLeavesTheUnitItsReadyTransaction(EmbeddedPulsar pulsar)
      throws Exception {
    opening(pulsar, Set.of(3), (opener, handed) -> {
      handed.add(opener.openForUnit()); // asks 1 (on the spot) and 2 (ahead)
      TxnOpener.Prefetched ready = opener.peekReady();
      ready.txn().get(10, TimeUnit.SECONDS);

      TxnOpener.Prefetched unit = opener.openForUnit(); // asking 3, the next one ahead, throws
      handed.add(unit);
      assertThat(unit).as("the unit got the transaction opened ahead for it").isSameAs(ready);
      assertThat(unit.transaction().getState()).as("not aborted under the unit").isEqualTo(Transaction.State.OPEN);

      handed.add(opener.openForUnit()); // the failed one ahead is passed over like one that failed late
    });
  }

  @Test
  void aSynchronousFailureToOpenTheNextOneAheadDoesNotLeakTheOneOpenedOnTheSpot(EmbeddedPulsar pulsar)
      throws Exception {
    opening(pulsar, Set.of(2), (opener, handed) -> {
      handed.add(opener.openForUnit()); // asking 1 (on the spot) works, 2 (ahead) throws
      handed.add(opener.openForUnit());
    });
  }

  @Test
  void aSynchronousFailureToOpenOnTheSpotIsAnOutageForTheUnit(EmbeddedPulsar pulsar) throws Exception {
    opening(pulsar, Set.of(1), (opener, handed) -> {
      Throwable failed = catchThrowable(opener::openForUnit);
      assertThat(failed).as("the unit's publish fails").isNotNull();
      // what the unit's publish throws (PulsarTxnTransaction.send): the unit of work rolls back
      assertThat(PulsarErrors.classify(failed, "m-1", "t")).isInstanceOf(BrokerUnavailableException.class)
          .hasMessageStartingWith("Pulsar is unavailable for message m-1 on t")
          .hasRootCauseInstanceOf(IllegalStateException.class);
      handed.add(opener.openForUnit()); // the next unit opens its own
    });
  }

  /** What a test does with an opener whose asks numbered in {@code throwing} throw; adds what units got. */
  private interface Scenario {

    void run(TxnOpener opener, List<TxnOpener.Prefetched> handed) throws Exception;
  }

  /**
   * Runs {@code scenario}, then closes the opener and checks that every transaction it asked for and opened is a
   * unit's (open) or aborted: none left open until the coordinator's timeout.
   */
  private static void opening(EmbeddedPulsar pulsar, Set<Integer> throwing, Scenario scenario) throws Exception {
    try (PulsarClient client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).enableTransaction(true)
        .build()) {
      Asking asking = new Asking(client, throwing);
      TxnOpener opener = new TxnOpener(asking, ahead(pulsar), Duration.ofSeconds(10), Clock.systemUTC());
      List<TxnOpener.Prefetched> handed = new CopyOnWriteArrayList<>();
      try {
        scenario.run(opener, handed);
      } finally {
        closeAndCheck(opener, asking, handed);
      }
    }
  }

  private static void closeAndCheck(TxnOpener opener, Asking asking, List<TxnOpener.Prefetched> handed)
      throws Exception {
    Set<CompletableFuture<Transaction>> units = ConcurrentHashMap.newKeySet();
    for (TxnOpener.Prefetched p : handed) {
      units.add(p.txn());
      assertThat(p.transaction().getState()).as("a unit's transaction stays open").isEqualTo(Transaction.State.OPEN);
    }
    opener.close();
    assertThat(asking.created).as("asked for").hasSizeGreaterThan(handed.size());
    for (CompletableFuture<Transaction> f : asking.created) {
      if (!units.contains(f) && !f.isCompletedExceptionally()) {
        Transaction t = f.get(10, TimeUnit.SECONDS);
        await("unused " + t.getTxnID() + " aborted").atMost(Duration.ofSeconds(5))
            .until(() -> t.getState() == Transaction.State.ABORTED);
      }
    }
    for (TxnOpener.Prefetched p : handed) {
      p.transaction().abort().get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * The backend's way of asking the real client for a transaction, except that the asks numbered in {@code throwing}
   * (from 1) throw as a client does that is closed or whose coordinator is not ready; {@link #created} holds every
   * answer, a throw as a failed future.
   */
  private static final class Asking implements Supplier<CompletableFuture<Transaction>> {

    private final PulsarClient client;
    private final Set<Integer> throwing;
    private final AtomicInteger asks = new AtomicInteger();
    final List<CompletableFuture<Transaction>> created = new CopyOnWriteArrayList<>();

    Asking(PulsarClient client, Set<Integer> throwing) {
      this.client = client;
      this.throwing = throwing;
    }

    @Override
    public CompletableFuture<Transaction> get() {
      if (throwing.contains(asks.incrementAndGet())) {
        IllegalStateException e = new IllegalStateException("transaction coordinator not ready");
        created.add(CompletableFuture.failedFuture(e));
        throw e;
      }
      try {
        CompletableFuture<Transaction> f = client.newTransaction().withTransactionTimeout(20, TimeUnit.SECONDS).build();
        created.add(f);
        return f;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
  }
}
