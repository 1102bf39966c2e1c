package io.converge.consumer;

import io.converge.consumer.internal.DefaultFailureClassifier;

/**
 * Decides the {@link FailureKind} of an exception thrown by a handler. Implementations must be
 * thread-safe and must not throw.
 */
@FunctionalInterface
public interface FailureClassifier {

  /** The kind of {@code failure}; never null. */
  FailureKind classify(Throwable failure);

  /**
   * The default: {@link MoneyAnomalyException} (anywhere in the cause chain) → money anomaly;
   * {@link BusinessException} or {@link IllegalTransitionException} → business; everything else,
   * including SQL errors, I/O errors, timeouts and {@link StaleStateException} → technical (retried,
   * then dead-lettered: an unknown error is never silently treated as final).
   */
  static FailureClassifier defaults() {
    return DefaultFailureClassifier.INSTANCE;
  }
}
