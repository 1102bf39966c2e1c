package io.converge.core.internal;

import io.converge.core.ConvergeException;
import io.converge.core.DatabaseRefusedException;
import io.converge.core.DatabaseUnavailableException;
import java.io.EOFException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The one classification of database errors in Converge: an <b>outage</b> is a connection to the database that was
 * lost or refused; every other database error is an answer of the database about the work, a failure of the unit.
 * An outage is waited out (a consumer counts no attempt, a relay or a start-up waits, the Idempotency-Key filter
 * releases the key); a failure of the unit is not (a consumer counts an attempt and dead-letters the message after
 * its policy's attempts, the filter stores the failure as the answer).
 *
 * <p>An outage is, on one throwable ({@link #isOutage}):
 * <ul>
 *   <li>an {@link SQLException} whose SQLState is of class {@code 08} (connection exception: cannot connect, the
 *       connection failed or does not exist); {@code 57P01} (admin shutdown, e.g. {@code pg_terminate_backend} or a
 *       fast shutdown), {@code 57P02} (crash shutdown), {@code 57P03} (cannot connect now: starting up or in
 *       recovery), {@code 57P05} (idle session timeout: the server closed the session); {@code 53300} (too many
 *       connections: the server refused the connection);</li>
 *   <li>JDBC's {@link SQLTransientConnectionException} (a pool that could not hand out a connection in time, e.g.
 *       HikariCP's "Connection is not available, request timed out"), {@link SQLNonTransientConnectionException}
 *       and {@link SQLRecoverableException} (the driver says the connection must be opened again), whatever their
 *       SQLState;</li>
 *   <li>an {@link SQLException} caused by a socket failure ({@link SocketException}, which includes
 *       {@code ConnectException}; {@link SocketTimeoutException}, {@link UnknownHostException}) or an
 *       {@link EOFException} (the server closed the stream), for drivers that report them without a class 08 state.
 *       An I/O error that is not below an {@code SQLException} (a handler's own HTTP call) is not a database
 *       outage;</li>
 *   <li>Spring's {@code CannotCreateTransactionException} and {@code DataAccessResourceFailureException} (e.g.
 *       {@code CannotGetJdbcConnectionException}), matched by name with their subclasses (Spring is not required),
 *       only when no {@code SQLException} is among their causes: Spring also translates class 53, 54, 57 and 58
 *       states into {@code DataAccessResourceFailureException}, so a wrapped {@code SQLException} decides.</li>
 * </ul>
 *
 * <p>Everything else is not an outage: the database answered, so running the same work again meets the same answer
 * (or a transient one that counts as an attempt). Among them: {@code 25P02} (in failed SQL transaction: an earlier
 * statement of the unit failed, e.g. a caught unique violation), class {@code 23} (constraint violations, also a
 * {@code COMMIT} refused for a deferred constraint), class {@code 22} (data), {@code 40001} and {@code 40P01}
 * (serialization failure, deadlock: the server rolled back the work, a run again may succeed, and it is counted),
 * {@code 55P03} (lock not available: a {@code lock_timeout}), {@code 57014} (query cancelled: a
 * {@code statement_timeout}), {@code 54000} (program limit exceeded), {@code 53100}/{@code 53200}/{@code 53400}
 * (disk full, out of memory, configuration limit: not a refused connection; waiting them out would stop every queue
 * without a trace), {@code 57P04} (database dropped), class {@code 28} (bad credentials: a configuration error, not
 * a wait), {@code 42} (syntax, missing table), {@code XX}, and an {@code SQLException} without a state and without
 * one of the causes above.
 *
 * <p>Stateless and thread-safe; no dependency beyond the JDK.
 */
public final class DatabaseErrors {

  /** The SQLStates of a lost or refused connection outside class 08 (see the class comment). */
  private static final Set<String> OUTAGE_STATES = Set.of("57P01", "57P02", "57P03", "57P05", "53300");
  /** Spring's exceptions for an unreachable database (subclasses count), by name: Spring is optional. */
  private static final Set<String> SPRING_OUTAGES = Set.of(
      "org.springframework.transaction.CannotCreateTransactionException",
      "org.springframework.dao.DataAccessResourceFailureException");

  private DatabaseErrors() {
  }

  /** True when {@code t} itself (not its causes) is an outage (class comment); false for null. */
  public static boolean isOutage(Throwable t) {
    if (t instanceof SQLTransientConnectionException || t instanceof SQLNonTransientConnectionException
        || t instanceof SQLRecoverableException) {
      return true;
    }
    if (t instanceof SQLException sql) {
      return isOutageState(sql.getSQLState()) || socketFailureBelow(sql);
    }
    return t != null && named(t.getClass()) && firstSqlException(t.getCause()) == null;
  }

  /** True when {@code sqlState} (nullable) is of class 08 or one of the outage states of the class comment. */
  public static boolean isOutageState(String sqlState) {
    return sqlState != null && (sqlState.startsWith("08") || OUTAGE_STATES.contains(sqlState));
  }

  /** The first throwable of {@code failure}'s cause chain (itself included) that is an outage, or null. */
  public static Throwable outageIn(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (isOutage(t)) {
        return t;
      }
    }
    return null;
  }

  /** The SQLState of the first {@code SQLException} in {@code failure}'s cause chain that has one, or null. */
  public static String sqlState(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof SQLException sql && sql.getSQLState() != null) {
        return sql.getSQLState();
      }
    }
    return null;
  }

  /**
   * {@code e} as the Converge exception it means: a {@link DatabaseUnavailableException} when its cause chain holds
   * an outage, else a {@link DatabaseRefusedException} carrying its SQLState. Both say {@code what} and carry
   * {@code messageId} (nullable) and {@code e} as the cause.
   */
  public static ConvergeException translate(String what, String messageId, SQLException e) {
    if (outageIn(e) != null) {
      return new DatabaseUnavailableException(what, messageId, e);
    }
    return new DatabaseRefusedException(what, messageId, sqlState(e), e);
  }

  private static boolean socketFailureBelow(SQLException sql) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = sql.getCause(); t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof SocketException || t instanceof SocketTimeoutException || t instanceof UnknownHostException
          || t instanceof EOFException) {
        return true;
      }
    }
    return false;
  }

  private static SQLException firstSqlException(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof SQLException sql) {
        return sql;
      }
    }
    return null;
  }

  private static boolean named(Class<?> type) {
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      if (SPRING_OUTAGES.contains(c.getName())) {
        return true;
      }
    }
    return false;
  }
}
