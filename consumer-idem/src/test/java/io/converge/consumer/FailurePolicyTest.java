package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class FailurePolicyTest {

  private final FailureClassifier classifier = FailureClassifier.defaults();

  @Test
  void classifiesTheArticlesThreeKinds() {
    assertThat(classifier.classify(new SQLTransientConnectionException("connection refused"))).isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new IOException("timeout"))).isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new IllegalStateException("unknown"))).isEqualTo(FailureKind.TECHNICAL);
    assertThat(classifier.classify(new BusinessException("ACCOUNT_NOT_FOUND", "no account 7"))).isEqualTo(FailureKind.BUSINESS);
    assertThat(classifier.classify(new MoneyAnomalyException("amount mismatch", "100.00 EUR", "10.00 EUR")))
        .isEqualTo(FailureKind.MONEY_ANOMALY);
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
