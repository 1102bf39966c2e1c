package io.converge.consumer.micrometer;

import io.converge.consumer.http.IdempotencyMetrics;
import io.converge.consumer.http.IdempotencyProblem;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * Idempotency-Key metrics on Micrometer, counters tagged {@code endpoint} ({@code METHOD pattern}):
 * {@code idempotency.claimed} (the handler ran), {@code idempotency.hit} (a response was replayed),
 * {@code idempotency.conflict} (422), {@code idempotency.in_progress} (409),
 * {@code idempotency.rejected} (also tagged {@code reason}: key-missing, key-invalid, tenant-invalid,
 * body-invalid, body-too-large, store-unavailable) and {@code idempotency.taken_over}. The hit rate of
 * the article's 13.2 is {@code hit / (hit + claimed)}. Thread-safe. Needs {@code io.micrometer:micrometer-core}.
 */
public final class MicrometerIdempotencyMetrics implements IdempotencyMetrics {

  private final MeterRegistry registry;

  private MicrometerIdempotencyMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Counters on {@code registry}. */
  public static MicrometerIdempotencyMetrics of(MeterRegistry registry) {
    return new MicrometerIdempotencyMetrics(Objects.requireNonNull(registry, "registry"));
  }

  @Override
  public void claimed(String endpoint) {
    count("idempotency.claimed", endpoint);
  }

  @Override
  public void hit(String endpoint) {
    count("idempotency.hit", endpoint);
  }

  @Override
  public void conflict(String endpoint) {
    count("idempotency.conflict", endpoint);
  }

  @Override
  public void inProgress(String endpoint) {
    count("idempotency.in_progress", endpoint);
  }

  @Override
  public void rejected(String endpoint, IdempotencyProblem problem) {
    count("idempotency.rejected", endpoint, "reason", problem.code());
  }

  @Override
  public void takenOver(String endpoint) {
    count("idempotency.taken_over", endpoint);
  }

  /** Counts one on the counter {@code name} of {@code endpoint}, with the further tags {@code tags} (key, value, …). */
  private void count(String name, String endpoint, String... tags) {
    Counter.builder(name).tag("endpoint", endpoint).tags(tags).register(registry).increment();
  }
}
