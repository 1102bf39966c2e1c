package io.converge.consumer;

import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.DatabaseUnavailableException;
import io.converge.producer.LateCommitFencedException;
import io.converge.producer.TransactionTimedOutException;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Whether a failure means "something the work needed was unavailable, and the work was rolled back":
 * retrying the same work later is safe and may succeed. The Idempotency-Key filter releases a key on
 * such a failure (503, the retry runs the handler) instead of storing the failure as the answer.
 *
 * <p>An unavailability is, anywhere in the cause chain:
 *
 * <ul>
 *   <li>Converge's {@link BrokerUnavailableException}, {@link DatabaseUnavailableException},
 *       {@link LateCommitFencedException}, {@link TransactionTimedOutException};
 *   <li>a {@link SQLTransientException} (a connection-pool timeout such as HikariCP's
 *       {@code SQLTransientConnectionException}, a statement timeout, a transaction rollback);
 *   <li>an {@link SQLException} whose SQLState is a connection failure (class {@code 08}), too many
 *       connections ({@code 53300}), a server shutting down or starting ({@code 57P01}-{@code 57P03}), a
 *       cancelled statement ({@code 57014}), a lock timeout ({@code 55P03}), a serialization failure
 *       ({@code 40001}) or a deadlock ({@code 40P01});
 *   <li>Spring's {@code CannotCreateTransactionException}, {@code CannotGetJdbcConnectionException} and
 *       {@code TransactionTimedOutException} (matched by name: Spring is not required).
 * </ul>
 *
 * Anything else (a business refusal, a bug, a failed commit reported by Spring as
 * {@code TransactionSystemException}) is not. One caveat: producer-txn also reports a commit whose outcome
 * is unknown (the connection broke during {@code COMMIT}) as a {@link DatabaseUnavailableException}; a retry
 * of such work relies on the business unique constraints, as every at-least-once path does.
 *
 * <p>Stateless and thread-safe.
 */
public final class Unavailability {

  private static final Set<String> SQL_STATES = Set.of("53300", "57P01", "57P02", "57P03", "57014", "55P03", "40001",
      "40P01");
  private static final Set<String> SPRING = Set.of(
      "org.springframework.transaction.CannotCreateTransactionException",
      "org.springframework.transaction.TransactionTimedOutException",
      "org.springframework.jdbc.CannotGetJdbcConnectionException");

  private Unavailability() {}

  /** True when {@code failure} (nullable) or one of its causes is an unavailability (see the class comment). */
  public static boolean isUnavailability(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof BrokerUnavailableException || t instanceof DatabaseUnavailableException
          || t instanceof LateCommitFencedException || t instanceof TransactionTimedOutException
          || t instanceof SQLTransientException || spring(t.getClass())) {
        return true;
      }
      if (t instanceof SQLException sql && sql.getSQLState() != null
          && (sql.getSQLState().startsWith("08") || SQL_STATES.contains(sql.getSQLState()))) {
        return true;
      }
    }
    return false;
  }

  private static boolean spring(Class<?> type) {
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      if (SPRING.contains(c.getName())) {
        return true;
      }
    }
    return false;
  }
}
