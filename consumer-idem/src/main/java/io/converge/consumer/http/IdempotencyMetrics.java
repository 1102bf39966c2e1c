package io.converge.consumer.http;

/**
 * Receives what the Idempotency-Key filter counts, per endpoint (its {@code METHOD pattern}). The
 * Micrometer implementation is {@code io.converge.consumer.micrometer.MicrometerIdempotencyMetrics}
 * (meters {@code idempotency.claimed}, {@code idempotency.hit}, {@code idempotency.conflict},
 * {@code idempotency.in_progress}, {@code idempotency.rejected}, {@code idempotency.taken_over}).
 * Implementations are thread-safe and must not throw.
 */
public interface IdempotencyMetrics {

  /** A new key was claimed and the handler runs. */
  default void claimed(String endpoint) {
  }

  /** A stored response was replayed. */
  void hit(String endpoint);

  /** A key was reused with another request: 422. */
  void conflict(String endpoint);

  /** A key was still being processed: 409. */
  void inProgress(String endpoint);

  /** A request was refused for {@code problem} (malformed key, body, tenant, store down). */
  default void rejected(String endpoint, IdempotencyProblem problem) {
  }

  /** A claim whose lease had expired (its process died) was taken over. */
  default void takenOver(String endpoint) {
  }

  /** Counts nothing. */
  IdempotencyMetrics NONE = new IdempotencyMetrics() {

    @Override
    public void hit(String endpoint) {
    }

    @Override
    public void conflict(String endpoint) {
    }

    @Override
    public void inProgress(String endpoint) {
    }
  };

  /**
   * Counts nothing.
   *
   * @deprecated use {@link #NONE}, the one name of the no-op in every metrics SPI of Converge
   */
  @Deprecated(since = "0.2", forRemoval = true)
  static IdempotencyMetrics noop() {
    return NONE;
  }
}
