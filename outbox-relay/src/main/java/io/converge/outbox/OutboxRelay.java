package io.converge.outbox;

/**
 * Publishes the rows of {@code converge_outbox} to a broker, at least once, in order per key. Any
 * number of relays (threads or processes) may drain one outbox: each claims a batch of key heads with
 * {@code FOR UPDATE SKIP LOCKED}, so a key is drained by one relay at a time and no row is published
 * twice in normal operation; a relay killed mid-batch leaves its rows unpublished (its transaction
 * rolls back), and another relay sends them again with the same message id.
 *
 * <p>A row the broker refuses ({@code relay.maxAttempts} times, with backoff) is parked: its key's line
 * (its rows of that tenant on that topic) waits for {@link Outbox#resume(String, String, String)}, other
 * lines flow. When the broker is down the relay backs off
 * exponentially with jitter and resumes by itself. When idle it polls adaptively (every
 * {@code relay.idlePollMin} up to {@code relay.idlePollMax}).
 *
 * <pre>{@code
 * try (OutboxRelay relay = OutboxRelay.builder().dataSource(ds).sink(RocketMQSink.nameServer(ns).build()).build()) {
 *   relay.start();
 *   ...
 * }
 * }</pre>
 *
 * <p>Thread-safe. {@link #close()} stops the relay and closes its sink.
 */
public interface OutboxRelay extends AutoCloseable {

  /** A builder; see {@link OutboxRelayBuilder} for the settings and their defaults. */
  static OutboxRelayBuilder builder() {
    return new OutboxRelayBuilder();
  }

  /** Starts the relay's thread (idempotent). */
  void start();

  /**
   * Runs one claim-send-mark cycle on the caller's thread (for tools and tests; do not mix with a
   * started relay).
   *
   * @return the number of rows published
   */
  int drainOnce();

  /** The relay's name (its thread and logs). */
  String name();

  /** Stops the thread, waiting for the current batch, and closes the sink. Idempotent. */
  @Override
  void close();
}
