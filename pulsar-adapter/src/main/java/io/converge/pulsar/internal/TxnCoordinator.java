package io.converge.pulsar.internal;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.transaction.TransactionCoordinatorClientException;
import org.apache.pulsar.client.api.transaction.TxnID;
import org.apache.pulsar.client.impl.PulsarClientImpl;

/**
 * The one place that reaches into the Pulsar client's implementation: commits a transaction by id
 * from any client (the public API only commits a {@code Transaction} object of the same client).
 * Thread-safe.
 */
public final class TxnCoordinator {

  /** What the coordinator answered to a commit by id. */
  public enum Answer {
    /** The transaction was open and is now committed. */
    COMMITTED,
    /** The coordinator does not know it (any more): committed, aborted or timed out. */
    NOT_FOUND,
    /** No answer (broker down, timeout): ask again later. */
    NO_ANSWER
  }

  private final PulsarClientImpl client;
  private final Duration timeout;

  public TxnCoordinator(PulsarClient client, Duration timeout) {
    this.client = (PulsarClientImpl) client;
    this.timeout = timeout;
  }

  /** Commits transaction {@code (most, least)}. Never throws. */
  public Answer commit(long most, long least) {
    try {
      client.getTcClient().commitAsync(new TxnID(most, least)).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return Answer.COMMITTED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Answer.NO_ANSWER;
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof TransactionCoordinatorClientException.TransactionNotFoundException
          || c instanceof TransactionCoordinatorClientException.InvalidTxnStatusException) {
        return Answer.NOT_FOUND;
      }
      return Answer.NO_ANSWER;
    } catch (Exception e) {
      return Answer.NO_ANSWER;
    }
  }
}
