package io.converge.outbox.spi;

/**
 * Where the relay publishes outbox rows: one broker client. Called by one relay thread at a time per
 * sink instance; implementations must be safe to call from the relay's thread and to close from
 * another.
 *
 * <p>Failures are classified by type, and the relay acts on the type:
 * <ul>
 *   <li>{@link io.converge.producer.BrokerUnavailableException}: the broker cannot be reached or is
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

  /** Stops the client. Idempotent. */
  @Override
  void close();
}
