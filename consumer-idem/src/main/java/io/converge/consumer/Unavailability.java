package io.converge.consumer;

import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.CommitOutcomeUnknownException;
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
 * Anything else (a business refusal, a bug) is not.
 *
 * <p><b>A commit whose outcome is unknown is never an unavailability</b>, even when it also matches the list above:
 * the connection broke during {@code COMMIT} (or the transaction manager could not tell), so the work may have
 * committed, and running it again could do it twice (charge twice). Such a failure is, anywhere in the cause chain
 * ({@link #isCommitOutcomeUnknown}): Converge's {@link CommitOutcomeUnknownException} (producer-txn's failed commit, a
 * {@link DatabaseUnavailableException}) and Spring's {@code TransactionSystemException} (a failed commit or
 * rollback, e.g. {@code DataSourceTransactionManager}'s "JDBC commit failed") and
 * {@code HeuristicCompletionException} (matched by name, with their subclasses). A failure whose commit failed behind
 * another exception (Spring Boot's {@code JdbcTransactionManager} translates it into a {@code DataAccessException}, and
 * a failed rollback after it replaces it) is told by {@link CommitOutcome}, which Converge's Spring integration feeds
 * from every Spring transaction manager. So only work known to have been rolled back is released; a plain JDBC
 * {@code Connection.commit()} that fails with SQLState {@code 08} in application code cannot be told from a failed
 * statement and is the application's to report (throw a {@link CommitOutcomeUnknownException}).
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

  private static final Set<String> SPRING_OUTCOME_UNKNOWN = Set.of(
      "org.springframework.transaction.TransactionSystemException",
      "org.springframework.transaction.HeuristicCompletionException");

  private Unavailability() {}

  /**
   * True when {@code failure} (nullable) or one of its causes is an unavailability, and none reports a commit whose
   * outcome is unknown (see the class comment).
   */
  public static boolean isUnavailability(Throwable failure) {
    if (isCommitOutcomeUnknown(failure)) {
      return false;
    }
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

  /**
   * True when {@code failure} (nullable) or one of its causes reports a commit whose outcome is unknown: Converge's
   * {@link CommitOutcomeUnknownException}, Spring's {@code TransactionSystemException} or
   * {@code HeuristicCompletionException} (see the class comment).
   */
  public static boolean isCommitOutcomeUnknown(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof CommitOutcomeUnknownException || named(t.getClass(), SPRING_OUTCOME_UNKNOWN)) {
        return true;
      }
    }
    return false;
  }

  private static boolean spring(Class<?> type) {
    return named(type, SPRING);
  }

  private static boolean named(Class<?> type, Set<String> names) {
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      if (names.contains(c.getName())) {
        return true;
      }
    }
    return false;
  }
}
