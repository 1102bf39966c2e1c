package io.converge.consumer.http.internal;

import io.converge.consumer.http.IdempotencyMetrics;
import io.converge.consumer.http.IdempotencyProblem;
import io.converge.core.tracing.Tracing;

/**
 * The filter's metrics, which also write the request's outcome on the current (server) span as
 * {@value #OUTCOME}: {@code first-run}, {@code replay}, {@code in-progress} (409), {@code key-reused} (422) or the
 * code of the problem answered (e.g. {@code outcome-unknown}, 503); the last one called wins. Nothing without the
 * OpenTelemetry API or a current span. Thread-safe; never throws, as the metrics it wraps.
 */
final class SpanOutcomes implements IdempotencyMetrics {

  /** The span attribute of the Idempotency-Key. */
  static final String KEY = "converge.idempotency.key";
  /** The span attribute of the outcome. */
  static final String OUTCOME = "converge.idempotency.outcome";

  private final IdempotencyMetrics metrics;

  private SpanOutcomes(IdempotencyMetrics metrics) {
    this.metrics = metrics;
  }

  /** {@code metrics}, writing the outcomes on the current span too. */
  static IdempotencyMetrics wrap(IdempotencyMetrics metrics) {
    return new SpanOutcomes(metrics);
  }

  /** Writes the request's Idempotency-Key on the current span. */
  static void key(String key) {
    Tracing.annotateCurrent(KEY, key);
  }

  @Override
  public void claimed(String endpoint) {
    Tracing.annotateCurrent(OUTCOME, "first-run");
    metrics.claimed(endpoint);
  }

  @Override
  public void hit(String endpoint) {
    Tracing.annotateCurrent(OUTCOME, "replay");
    metrics.hit(endpoint);
  }

  @Override
  public void conflict(String endpoint) {
    Tracing.annotateCurrent(OUTCOME, IdempotencyProblem.KEY_REUSED.code());
    metrics.conflict(endpoint);
  }

  @Override
  public void inProgress(String endpoint) {
    Tracing.annotateCurrent(OUTCOME, IdempotencyProblem.IN_PROGRESS.code());
    metrics.inProgress(endpoint);
  }

  @Override
  public void rejected(String endpoint, IdempotencyProblem problem) {
    Tracing.annotateCurrent(OUTCOME, problem.code());
    metrics.rejected(endpoint, problem);
  }

  @Override
  public void takenOver(String endpoint) {
    metrics.takenOver(endpoint);
  }
}
