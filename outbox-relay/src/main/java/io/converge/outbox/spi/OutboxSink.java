package io.converge.outbox.spi;

import io.converge.core.BrokerUnavailableException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Where the relay publishes outbox rows: one broker client. Called by one relay thread at a time per
 * sink instance; implementations must be safe to call from the relay's thread and to close from
 * another. The relay calls {@link #sendAll} with each claimed batch; a sink that only implements
 * {@link #send} sends the batch one record at a time.
 *
 * <p>Failures are classified by type, and the relay acts on the type:
 * <ul>
 *   <li>{@link io.converge.core.BrokerUnavailableException}: the broker cannot be reached or is
 *       overloaded; nothing is wrong with the message. The relay retries it later with exponential
 *       backoff and never parks it for this reason.</li>
 *   <li>any other exception: the broker refused this message (too large, illegal); the relay counts an
 *       attempt and, after the configured maximum, parks the message's key.</li>
 * </ul>
 */
public interface OutboxSink extends AutoCloseable {

  /** The sink's name for logs and metrics, e.g. {@code rocketmq}. */
  String name();

  /**
   * Publishes {@code record} and returns once the broker has stored it. Messages of one key must go to
   * one queue/partition, so that the order of calls is the order consumers see.
   */
  void send(OutboxRecord record) throws Exception;

  /**
   * Publishes a batch of records, in {@link OutboxRecord#seq()} order per {@link OutboxRecord#orderKey()
   * order key}, and tells which were stored and which failed. The contract that keeps a key's order:
   * <ul>
   *   <li>records of one order key are stored in the order of {@code records} (which the relay gives in
   *       seq order);</li>
   *   <li>after a record of a key failed, no later record of that key in the batch is sent (it is in
   *       neither list of the result and stays unpublished);</li>
   *   <li>records of other keys are not affected by the failure (a sink may still skip the rest of a
   *       topic whose broker was just found unavailable, to avoid waiting for a second timeout).</li>
   * </ul>
   * A sink may send different keys concurrently. When the calling thread is interrupted it returns
   * what completed so far, with the interrupt flag set.
   *
   * <p>The default calls {@link #send} for each record in turn; a sink overrides it to pipeline sends.
   *
   * @param records the batch, in seq order; not modified
   * @return which records were stored and which failed; never null
   */
  default SendAllResult sendAll(List<OutboxRecord> records) {
    List<OutboxRecord> sent = new ArrayList<>();
    List<SendAllResult.Failure> failed = new ArrayList<>();
    Set<String> stopped = new HashSet<>();
    Set<String> unreachableTopics = new HashSet<>();
    for (OutboxRecord r : records) {
      if (stopped.contains(r.orderKey())) {
        continue; // an earlier record of this key failed: keep the key's order
      }
      if (unreachableTopics.contains(r.topic())) {
        stopped.add(r.orderKey()); // no second timeout on a topic whose broker just failed
        continue;
      }
      try {
        send(r);
        sent.add(r);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (Exception e) {
        stopped.add(r.orderKey());
        if (e instanceof BrokerUnavailableException) {
          unreachableTopics.add(r.topic());
        }
        failed.add(new SendAllResult.Failure(r, e));
      }
    }
    return new SendAllResult(sent, failed);
  }

  /** Stops the client. Idempotent. */
  @Override
  void close();
}
