package io.converge.consumer;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.CommitOutcomeUnknownException;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.LateCommitFencedException;
import io.converge.core.TransactionTimedOutException;
import io.converge.core.internal.DatabaseErrors;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Whether a failure means "something the work needed was unavailable, and the work was rolled back":
 * retrying the same work later is safe and may succeed. The Idempotency-Key filter releases a key on
 * such a failure (503, the retry runs the handler) instead of storing the failure as the answer.
 *
 * <p>An outage ({@link #isUnavailable}, asked of one throwable) is: Converge's {@link BrokerUnavailableException} and
 * {@link DatabaseUnavailableException}; a lost or refused database connection as the library's one classification,
 * {@link DatabaseErrors}, says (SQLState class {@code 08}, {@code 57P01}/{@code 57P02}/{@code 57P03}/{@code 57P05},
 * {@code 53300}, JDBC's connection exception types such as a pool timeout, Spring's
 * {@code CannotCreateTransactionException} and {@code DataAccessResourceFailureException} without an
 * {@code SQLException} below them). A consumer waits an outage out without counting an attempt; any other database
 * error (an aborted transaction {@code 25P02}, a constraint, a serialization failure, a deadlock) is a failure of the
 * unit and counts as an attempt.
 *
 * <p>An unavailability ({@link #isUnavailability}, anywhere in the cause chain, for the Idempotency-Key filter) is an
 * outage, or work that was rolled back and may simply run again: Converge's {@link LateCommitFencedException} and
 * {@link TransactionTimedOutException}, any {@link SQLTransientException} (e.g. a statement timeout), SQLState
 * {@code 57014} (cancelled statement), {@code 55P03} (lock timeout), {@code 40001} (serialization failure) and
 * {@code 40P01} (deadlock), Spring's {@code TransactionTimedOutException}
 * and {@code TransientDataAccessException} except {@code OptimisticLockingFailureException} (a lost race of the
 * handler's own logic). A consumer counts these as attempts: they repeat for ever when the handler itself is too slow.
 *
 * Anything else (a business refusal, a bug) is not.
 *
 * <p><b>A commit whose outcome is unknown is never an unavailability</b>, even when it also matches the list above:
 * the connection broke during {@code COMMIT} (or the transaction manager could not tell), so the work may have
 * committed, and running it again could do it twice (charge twice). Such a failure is, anywhere in the cause chain
 * ({@link #isCommitOutcomeUnknown}): Converge's {@link CommitOutcomeUnknownException} (producer-txn's failed commit, a
 * {@link DatabaseUnavailableException}), Spring's {@code TransactionSystemException} (a failed commit or
 * rollback, e.g. {@code DataSourceTransactionManager}'s "JDBC commit failed") and
 * {@code HeuristicCompletionException} (matched by name, with their subclasses), except a failed rollback of work the
 * application had already failed ({@linkplain #isFailedRollback see there}); Hibernate's failed commit, by its message
 * "Unable to commit against JDBC Connection" (Spring's {@code HibernateJpaDialect} translates it into a
 * {@code DataAccessResourceFailureException} "Hibernate transaction: Unable to commit ..." when the cause is a
 * connection failure, a {@code JpaSystemException} otherwise); and a {@code TransactionSystemException} or
 * {@code JpaSystemException} thrown by the rollback Spring runs after a failed commit (its stack holds
 * {@code AbstractPlatformTransactionManager.doRollbackOnCommitException}). A failure whose commit failed behind
 * another exception (Spring Boot's {@code JdbcTransactionManager} translates it into a {@code DataAccessException}, and
 * a failed rollback after it replaces it) is told by {@link CommitOutcome}, which Converge's Spring integration feeds
 * from every Spring transaction manager. So only work known to have been rolled back is released; a plain JDBC
 * {@code Connection.commit()} that fails with SQLState {@code 08} in application code cannot be told from a failed
 * statement and is the application's to report (throw a {@link CommitOutcomeUnknownException}).
 *
 * <p>Stateless and thread-safe.
 */
public final class Unavailability {

  /**
   * A cancelled statement (57014, e.g. a statement timeout), a lock timeout (55P03), a serialization failure (40001)
   * or a deadlock (40P01) rolled the work back, so a request may run again ({@link #isUnavailability}); for a
   * consumer it may be the handler's own slow query or lost race, which counts as an attempt ({@link #isUnavailable}
   * is false): so do the other "rolled back" failures.
   */
  private static final Set<String> ROLLED_BACK_SQL_STATES = Set.of("57014", "55P03", "40001", "40P01");
  /**
   * Spring's exceptions for work the server or the transaction manager rolled back and that may run again (a timeout,
   * a lock not acquired), by name: a request may be released, a consumer counts them as attempts (they can repeat
   * for ever when the work itself is too slow).
   */
  private static final Set<String> SPRING_ROLLED_BACK = Set.of(
      "org.springframework.transaction.TransactionTimedOutException",
      "org.springframework.dao.TransientDataAccessException");
  /** A lost race of the handler's own logic (a subclass of a transient exception above): never released. */
  private static final String OPTIMISTIC_LOCKING = "org.springframework.dao.OptimisticLockingFailureException";

  private static final Set<String> SPRING_OUTCOME_UNKNOWN = Set.of(
      "org.springframework.transaction.TransactionSystemException",
      "org.springframework.transaction.HeuristicCompletionException");

  private Unavailability() {
  }

  /** True when {@code failure} (nullable) or a cause is an unavailability and none an unknown commit (class comment). */
  public static boolean isUnavailability(Throwable failure) {
    if (isCommitOutcomeUnknown(failure)) {
      return false;
    }
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (isUnavailable(t) || isRolledBack(t) || isFailedRollback(t)) {
        return true;
      }
    }
    return false;
  }

  /** True when {@code failure} (nullable) or one of its causes reports a commit of unknown outcome (class comment). */
  public static boolean isCommitOutcomeUnknown(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof CommitOutcomeUnknownException
          || named(t.getClass(), SPRING_OUTCOME_UNKNOWN) && !isFailedRollback(t)
          || String.valueOf(t.getMessage()).contains(HIBERNATE_COMMIT_FAILED) || rollbackAfterFailedCommit(t)) {
        return true;
      }
    }
    return false;
  }

  /**
   * True when {@code failure}'s cause chain or suppressed exceptions hold a connection lost before the database
   * answered: an outage as {@link DatabaseErrors} classifies it (SQLState class {@code 08}, {@code 57P01} ...,
   * {@link SQLRecoverableException}, {@link SQLNonTransientConnectionException}), an {@link java.io.IOException}, a
   * pool's closed connection, or
   * Converge's {@link CommitOutcomeUnknownException}. A commit that failed without one of these was answered by the
   * database (a constraint checked at commit, a serialization failure): it was rolled back, its outcome is known.
   */
  public static boolean isConnectionLost(Throwable failure) {
    return anyInChain(failure, new IdentityHashMap<>(), t -> t instanceof CommitOutcomeUnknownException
        || DatabaseErrors.isOutage(t) || t instanceof java.io.IOException || closedConnection(t));
  }

  /**
   * Whether {@code t} itself (not its causes) says that the database or a broker cannot be reached: a wait, not a
   * verdict on the work. For the database, only a lost or refused connection ({@link DatabaseErrors#isOutage}). The consumer's default failure classifier asks this of each element of a cause chain and waits
   * the outage out without counting an attempt, for as long as it lasts. Failures that can repeat for ever when the work
   * itself is at fault (a local-transaction timeout, a fenced late commit, a statement or lock timeout, a serialization
   * failure or deadlock, an aborted transaction) are not in this list: they count as attempts. {@link #isUnavailability} (the Idempotency-Key filter) also releases those, since the
   * work was rolled back, and applies the commit-outcome rule (a redelivered message meets its own claim instead).
   */
  public static boolean isUnavailable(Throwable t) {
    return t instanceof BrokerUnavailableException || t instanceof DatabaseUnavailableException
        || DatabaseErrors.isOutage(t);
  }

  /** Work rolled back by a timeout, a fence or a lock: safe to run again, but not an outage (see the class comment). */
  private static boolean isRolledBack(Throwable t) {
    if (t instanceof LateCommitFencedException || t instanceof TransactionTimedOutException
        || t instanceof SQLTransientException
        || t instanceof SQLException sql && ROLLED_BACK_SQL_STATES.contains(String.valueOf(sql.getSQLState()))) {
      return true;
    }
    return !named(t.getClass(), Set.of(OPTIMISTIC_LOCKING)) && named(t.getClass(), SPRING_ROLLED_BACK);
  }

  /**
   * Spring's {@code TransactionSystemException}, or {@code JpaSystemException} ({@link #isFailedHibernateRollback}),
   * for a rollback that failed on a dead connection after the application's own failure (e.g. PostgreSQL crash-restarted
   * during the transaction: Spring's "JDBC rollback failed", Hibernate's
   * "Unable to rollback against JDBC Connection"): no commit was attempted, the server rolled the work back when the
   * connection died, so it is an outage. Told by the application exception Spring attaches when the rollback follows
   * the application's failure (a {@code TransactionTemplate}, {@code @Transactional}); a rollback that follows a failed
   * commit has none (its commit outcome is unknown; Converge's Spring integration also reports it to
   * {@link CommitOutcome}). Its cause chain, suppressed exceptions or application exception must hold a connection
   * failure ({@link #isUnavailable}, e.g. SQLState class {@code 08}) or a closed connection.
   */
  static boolean isFailedRollback(Throwable t) {
    if (named(t.getClass(), Set.of(JPA_SYSTEM_EXCEPTION))) {
      return isFailedHibernateRollback(t);
    }
    if (!named(t.getClass(), Set.of(TRANSACTION_SYSTEM_EXCEPTION))) {
      return false;
    }
    String message = String.valueOf(t.getMessage()).toLowerCase(java.util.Locale.ROOT);
    Throwable application = applicationException(t);
    if (application == null || !message.contains("rollback") && !message.contains("roll back")) {
      return false;
    }
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    return connectionLost(t.getCause(), seen) || connectionLost(application, seen);
  }

  private static final String TRANSACTION_SYSTEM_EXCEPTION = "org.springframework.transaction.TransactionSystemException";
  /** Spring's translation of a Hibernate exception it has no better class for, e.g. a failed rollback. */
  private static final String JPA_SYSTEM_EXCEPTION = "org.springframework.orm.jpa.JpaSystemException";
  /** Hibernate's failed rollback: an {@code org.hibernate.TransactionException} with this message. */
  private static final String HIBERNATE_TRANSACTION_EXCEPTION = "org.hibernate.TransactionException";
  private static final String HIBERNATE_ROLLBACK_FAILED = "Unable to rollback against JDBC Connection";
  /**
   * Hibernate's failed commit ({@code JdbcResourceLocalTransactionCoordinatorImpl}): the message of its exception, kept
   * by Spring's translations of it ({@code DataAccessResourceFailureException} "Hibernate transaction: Unable to commit
   * against JDBC Connection; ..." when the cause is a connection failure, {@code JpaSystemException} otherwise).
   */
  private static final String HIBERNATE_COMMIT_FAILED = "Unable to commit against JDBC Connection";
  /** The frame of Spring's rollback after a failed commit ({@code AbstractPlatformTransactionManager}). */
  private static final String ROLLBACK_ON_COMMIT_EXCEPTION = "doRollbackOnCommitException";

  /**
   * Spring's {@code JpaSystemException} for Hibernate's "Unable to rollback against JDBC Connection" (an
   * {@code org.hibernate.TransactionException}) on a lost or closed connection (e.g. HikariCP's "Connection is closed"
   * after the connection broke: PostgreSQL crash-restarted during the transaction), thrown by a rollback after the
   * application's failure: {@code JpaTransactionManager} attaches no application exception, so a rollback that follows
   * a failed commit is told by Spring's frame for it in the stack ({@link #rollbackAfterFailedCommit}).
   */
  private static boolean isFailedHibernateRollback(Throwable t) {
    Throwable hibernate = t.getCause();
    if (hibernate == null || !named(hibernate.getClass(), Set.of(HIBERNATE_TRANSACTION_EXCEPTION))
        || !String.valueOf(hibernate.getMessage()).contains(HIBERNATE_ROLLBACK_FAILED)
        || rollbackAfterFailedCommit(t)) {
      return false;
    }
    return connectionLost(hibernate.getCause(), new IdentityHashMap<>());
  }

  /**
   * A Spring {@code TransactionSystemException} or {@code JpaSystemException} thrown by the rollback Spring runs after
   * a failed commit (its stack holds {@code AbstractPlatformTransactionManager.doRollbackOnCommitException}): the
   * commit's outcome is unknown, whatever the rollback's exception says.
   */
  private static boolean rollbackAfterFailedCommit(Throwable t) {
    if (!named(t.getClass(), Set.of(JPA_SYSTEM_EXCEPTION, TRANSACTION_SYSTEM_EXCEPTION))) {
      return false;
    }
    for (StackTraceElement frame : t.getStackTrace()) {
      if (ROLLBACK_ON_COMMIT_EXCEPTION.equals(frame.getMethodName())
          && frame.getClassName().startsWith("org.springframework.transaction.")) {
        return true;
      }
    }
    return false;
  }

  /** A lost or closed connection in {@code t}'s cause chain or suppressed exceptions. */
  private static boolean connectionLost(Throwable t, Map<Throwable, Boolean> seen) {
    return anyInChain(t, seen, x -> isUnavailable(x) || closedConnection(x));
  }

  /** A pool's or driver's closed connection, by message (HikariCP, pgjdbc, Tomcat JDBC, c3p0: no SQLState). */
  private static boolean closedConnection(Throwable t) {
    String message = String.valueOf(t.getMessage()).toLowerCase(java.util.Locale.ROOT);
    return message.contains("connection has been closed") || message.contains("connection is closed")
        || message.contains("connection has already been closed") || message.contains("on a closed connection");
  }

  /** True when {@code test} holds for {@code t}, its cause chain or suppressed exceptions (each visited once). */
  private static boolean anyInChain(Throwable t, Map<Throwable, Boolean> seen, Predicate<Throwable> test) {
    if (t == null || seen.put(t, Boolean.TRUE) != null) {
      return false;
    }
    if (test.test(t)) {
      return true;
    }
    for (Throwable suppressed : t.getSuppressed()) {
      if (anyInChain(suppressed, seen, test)) {
        return true;
      }
    }
    return anyInChain(t.getCause(), seen, test);
  }

  /** {@code TransactionSystemException.getApplicationException()}, read reflectively (Spring is optional). */
  private static Throwable applicationException(Throwable t) {
    try {
      return (Throwable) t.getClass().getMethod("getApplicationException").invoke(t);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
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
