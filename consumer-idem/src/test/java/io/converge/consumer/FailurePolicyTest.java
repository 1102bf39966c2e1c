package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import io.converge.core.DatabaseRefusedException;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.LateCommitFencedException;
import io.converge.core.TransactionTimedOutException;
import java.io.IOException;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.OptimisticLockingFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.transaction.CannotCreateTransactionException;

class FailurePolicyTest {

  private final FailureClassifier classifier = FailureClassifier.defaults();

  @Test
  void classifiesTheArticlesThreeKinds() {
    assertThat(classifier.classify(new SQLException("duplicate key", "23505"))).isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new SQLException("statement timeout", "57014"))).isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new IOException("timeout"))).isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new IllegalStateException("unknown"))).isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new BusinessException("ACCOUNT_NOT_FOUND", "no account 7")))
        .isEqualTo(FailureKind.BUSINESS);
    assertThat(classifier.classify(new MoneyAnomalyException("amount mismatch", "100.00 EUR", "10.00 EUR")))
        .isEqualTo(FailureKind.MONEY_ANOMALY);
  }

  @Test
  void outagesOfTheDatabaseOrABrokerAreUnavailabilityNotAttempts() {
    assertThat(classifier.classify(new SQLTransientConnectionException("pool timeout after 2000ms")))
        .isEqualTo(FailureKind.UNAVAILABLE);
    assertThat(classifier.classify(new SQLRecoverableException("socket closed"))).isEqualTo(FailureKind.UNAVAILABLE);
    for (String state : new String[]{"08001", "08006", "57P01", "57P03", "53300"}) {
      assertThat(classifier.classify(new RuntimeException(new SQLException("x", state)))).as(state)
          .isEqualTo(FailureKind.UNAVAILABLE);
    }
    // issue 31.3: only a lost or refused connection is an outage; the database's answers about the unit count
    for (String state : new String[]{"25P02", "23505", "40001", "40P01", "55P03", "53100", "54000"}) {
      assertThat(classifier.classify(new RuntimeException(new SQLException("x", state)))).as(state)
          .isEqualTo(FailureKind.TECHNICAL);
    }
    assertThat(classifier.classify(new DatabaseRefusedException("Cannot publish message m1", "m1", "25P02",
        new SQLException("current transaction is aborted", "25P02")))).isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new DataAccessResourceFailureException("disk full",
        new SQLException("could not extend file", "53100")))).isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new ConvergeException("publish failed", null,
        new BrokerUnavailableException("RocketMQ refused", "m1", null)))).isEqualTo(FailureKind.UNAVAILABLE);
    assertThat(classifier.classify(new DatabaseUnavailableException("db", null, null)))
        .isEqualTo(FailureKind.UNAVAILABLE);
    assertThat(classifier.classify(new CannotCreateTransactionException("no connection")))
        .isEqualTo(FailureKind.UNAVAILABLE);
    assertThat(classifier.classify(new DataAccessResourceFailureException("down"))).isEqualTo(FailureKind.UNAVAILABLE);
    // a lost optimistic race is the handler's own logic
    assertThat(classifier.classify(new OptimisticLockingFailureException("stale"))).isEqualTo(FailureKind.TECHNICAL);
    // failures that repeat for ever when the handler itself is too slow or its id is fenced count as attempts
    assertThat(classifier.classify(new TransactionTimedOutException("slow", "m1", null)))
        .isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new LateCommitFencedException("fenced", "m1", null)))
        .isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new QueryTimeoutException("slow"))).isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new SQLTimeoutException("statement timeout"))).isEqualTo(FailureKind.TECHNICAL);
    // a refusal wins over an outage found deeper in the chain
    assertThat(classifier.classify(new BusinessException("RISK", "no", new SQLTransientConnectionException("x"))))
        .isEqualTo(FailureKind.BUSINESS);
  }

  @Test
  void outageBackoffUsesTheSameCurveCappedSeparately() {
    FailurePolicy p = new FailurePolicy(3, Duration.ofMillis(100), Duration.ofMillis(400), 2.0, 0.0,
        Duration.ofSeconds(2));
    assertThat(p.delay(10, 0.5)).isEqualTo(Duration.ofMillis(400));
    assertThat(p.outageDelay(1, 0.5)).isEqualTo(Duration.ofMillis(100));
    assertThat(p.outageDelay(4, 0.5)).isEqualTo(Duration.ofMillis(800));
    assertThat(p.outageDelay(60, 0.5)).isEqualTo(Duration.ofSeconds(2));
    assertThat(FailurePolicy.defaults().maxOutageBackoff()).isEqualTo(Duration.ofSeconds(30));
    assertThatThrownBy(() -> FailurePolicy.defaults().withMaxOutageBackoff(Duration.ofMillis(10)))
        .hasMessage("policy.maxOutageBackoff must be between initialBackoff (PT0.2S) and 1h, but was PT0.01S");
  }

  @Test
  void looksThroughWrappersAndLetsAMoneyAnomalyWin() {
    RuntimeException wrappedBusiness = new RuntimeException(new BusinessException("RISK", "rejected"));
    assertThat(classifier.classify(wrappedBusiness)).isEqualTo(FailureKind.BUSINESS);
    BusinessException outer = new BusinessException("X", "y", new MoneyAnomalyException("currency", "EUR", "USD"));
    assertThat(classifier.classify(outer)).isEqualTo(FailureKind.MONEY_ANOMALY);
  }

  @Test
  void backoffGrowsExponentiallyUpToTheCapWithBoundedJitter() {
    FailurePolicy p = new FailurePolicy(5, Duration.ofMillis(100), Duration.ofMillis(1000), 2.0, 0.2);
    assertThat(p.baseDelay(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(p.baseDelay(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(p.baseDelay(4)).isEqualTo(Duration.ofMillis(800));
    assertThat(p.baseDelay(5)).isEqualTo(Duration.ofMillis(1000));
    assertThat(p.delay(2, 0.0)).isEqualTo(Duration.ofMillis(160));
    assertThat(p.delay(2, 0.5)).isEqualTo(Duration.ofMillis(200));
    assertThat(p.delay(2, 0.999999)).isEqualTo(Duration.ofMillis(240));
  }

  @Test
  void rejectsBadValuesNamingThePropertyAndValue() {
    assertThatThrownBy(() -> FailurePolicy.defaults().withMaxAttempts(0))
        .hasMessage("policy.maxAttempts must be between 1 and 100, but was 0");
    assertThatThrownBy(() -> FailurePolicy.defaults().withBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .hasMessageContaining("policy.maxBackoff must be at least initialBackoff (PT2S), but was PT1S");
    assertThatThrownBy(() -> new FailurePolicy(3, Duration.ofMillis(1), Duration.ofMillis(1), 2.0, 1.5))
        .hasMessage("policy.jitter must be between 0.0 and 1.0, but was 1.5");
    assertThat(FailurePolicy.defaults().maxAttempts()).isEqualTo(3);
  }
}
