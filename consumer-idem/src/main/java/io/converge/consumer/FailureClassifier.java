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
   * {@code DatabaseUnavailableException}, {@code LateCommitFencedException},
   * {@code TransactionTimedOutException}; JDBC's {@code SQLTransientConnectionException} (e.g. a
   * connection-pool timeout), {@code SQLRecoverableException}, {@code SQLNonTransientConnectionException};
   * any {@code SQLException} whose SQLState is of class 08 (connection), 57P (server shutting down),
   * 53 (insufficient resources), or is 40001 / 40P01 (serialization failure, deadlock: rolled back by
   * the server, safe to run again); Spring's {@code CannotCreateTransactionException},
   * {@code DataAccessResourceFailureException} and {@code TransientDataAccessException} (but not
   * optimistic-locking failures). Everything else, including other SQL errors, I/O errors and
   * {@link StaleStateException}, → technical (retried, then dead-lettered: an unknown error is never
   * silently treated as final).
   */
  static FailureClassifier defaults() {
    return DefaultFailureClassifier.INSTANCE;
  }
}
