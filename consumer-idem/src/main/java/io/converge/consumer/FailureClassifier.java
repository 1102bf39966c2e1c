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
   * The default, walking the cause chain: {@link MoneyAnomalyException} anywhere → money anomaly;
   * else {@link BusinessException} or {@link IllegalTransitionException} → business; else an outage
   * → {@link FailureKind#UNAVAILABLE}: Converge's {@code BrokerUnavailableException},
   * {@code DatabaseUnavailableException}; a lost or refused database connection as
   * {@code io.converge.core.internal.DatabaseErrors} classifies it (SQLState class 08, 57P01, 57P02,
   * 57P03, 57P05, 53300; JDBC's {@code SQLTransientConnectionException} such as a pool timeout,
   * {@code SQLRecoverableException}, {@code SQLNonTransientConnectionException}; Spring's
   * {@code CannotCreateTransactionException} and {@code DataAccessResourceFailureException} without an
   * {@code SQLException} below them). Everything else → technical (retried, then dead-lettered: an
   * unknown error is never silently treated as final), including every other database error
   * (Converge's {@code DatabaseRefusedException}, an aborted transaction 25P02, constraint violations,
   * 40001 / 40P01, lock and statement timeouts, other class 53 states), {@code LateCommitFencedException},
   * {@code TransactionTimedOutException}, I/O errors and {@link StaleStateException}.
   */
  static FailureClassifier defaults() {
    return DefaultFailureClassifier.INSTANCE;
  }
}
