package io.converge.consumer.internal;

import io.converge.consumer.BusinessException;
import io.converge.consumer.FailureClassifier;
import io.converge.consumer.FailureKind;
import io.converge.consumer.IllegalTransitionException;
import io.converge.consumer.MoneyAnomalyException;
import io.converge.consumer.Unavailability;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * See {@link FailureClassifier#defaults()}. Walks the cause chain: a money anomaly anywhere wins, then a
 * business refusal, then an outage; anything else is technical. Stateless and thread-safe.
 */
public final class DefaultFailureClassifier implements FailureClassifier {

  /** The single instance. */
  public static final DefaultFailureClassifier INSTANCE = new DefaultFailureClassifier();

  private DefaultFailureClassifier() {
  }

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
      } else if (found == FailureKind.TECHNICAL && Unavailability.isUnavailable(t)) {
        found = FailureKind.UNAVAILABLE;
      }
    }
    return found;
  }
}
