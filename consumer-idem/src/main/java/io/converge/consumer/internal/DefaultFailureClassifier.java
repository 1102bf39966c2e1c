package io.converge.consumer.internal;

import io.converge.consumer.BusinessException;
import io.converge.consumer.FailureClassifier;
import io.converge.consumer.FailureKind;
import io.converge.consumer.IllegalTransitionException;
import io.converge.consumer.MoneyAnomalyException;
import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.DatabaseUnavailableException;
import io.converge.producer.LateCommitFencedException;
import io.converge.producer.TransactionTimedOutException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * See {@link FailureClassifier#defaults()}. Walks the cause chain: a money anomaly anywhere wins, then a
 * business refusal, then an outage; anything else is technical. Stateless and thread-safe.
 */
public final class DefaultFailureClassifier implements FailureClassifier {

  /** The single instance. */
  public static final DefaultFailureClassifier INSTANCE = new DefaultFailureClassifier();

  /**
   * SQLState prefixes of an unavailable server or of a transaction the server rolled back and that is
   * safe to run again: 08 connection exception, 57P operator intervention (shutdown, cannot connect now),
   * 53 insufficient resources (too many connections, out of memory or disk), 40001 serialization
   * failure, 40P01 deadlock detected.
   */
  private static final String[] UNAVAILABLE_SQL_STATES = {"08", "57P", "53", "40001", "40P01"};

  /**
   * Spring's exceptions for the same conditions, by name: Spring is optional here. Subclasses count
   * (the whole hierarchy of each exception is checked), except optimistic-locking failures, which are
   * lost races of the handler's own logic.
   */
  private static final Set<String> UNAVAILABLE_CLASSES = Set.of(
      "org.springframework.transaction.CannotCreateTransactionException",
      "org.springframework.dao.DataAccessResourceFailureException",
      "org.springframework.dao.TransientDataAccessException");
  private static final String OPTIMISTIC_LOCKING = "org.springframework.dao.OptimisticLockingFailureException";

  private DefaultFailureClassifier() {}

  @Override
  public FailureKind classify(Throwable failure) {
    FailureKind found = FailureKind.TECHNICAL;
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof MoneyAnomalyException) {
        return FailureKind.MONEY_ANOMALY;
      }
      if (t instanceof BusinessException || t instanceof IllegalTransitionException) {
        found = FailureKind.BUSINESS;
      } else if (found == FailureKind.TECHNICAL && isUnavailability(t)) {
        found = FailureKind.UNAVAILABLE;
      }
    }
    return found;
  }

  /**
   * Whether {@code t} itself (not its causes) says that the database or a broker is unavailable, or that
   * the server rolled the transaction back for a reason that a later run does not meet.
   */
  public static boolean isUnavailability(Throwable t) {
    if (t instanceof BrokerUnavailableException || t instanceof DatabaseUnavailableException
        || t instanceof LateCommitFencedException || t instanceof TransactionTimedOutException
        || t instanceof SQLTransientConnectionException || t instanceof SQLRecoverableException
        || t instanceof SQLNonTransientConnectionException) {
      return true;
    }
    if (t instanceof SQLException sql && sql.getSQLState() != null) {
      for (String prefix : UNAVAILABLE_SQL_STATES) {
        if (sql.getSQLState().startsWith(prefix)) {
          return true;
        }
      }
    }
    boolean unavailable = false;
    for (Class<?> c = t.getClass(); c != null && c != Throwable.class; c = c.getSuperclass()) {
      if (c.getName().equals(OPTIMISTIC_LOCKING)) {
        return false;
      }
      unavailable |= UNAVAILABLE_CLASSES.contains(c.getName());
    }
    return unavailable;
  }
}
