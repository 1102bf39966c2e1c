package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The participants' retention: its floor, the coordinator's send horizon and the window it must cover. */
class SagaBranchRetentionTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @Test
  void aRetentionUnderSevenDaysIsRefusedQuotingIt() {
    assertThatThrownBy(() -> new SagaBranchRetention(Duration.ofDays(7).minusSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("converge.saga.branch-retention must be at least PT168H")
        .hasMessageEndingWith("but was PT167H59M59S");
    assertThat(SagaBranchRetention.defaults().retention()).isEqualTo(Duration.ofDays(30));
  }

  @Test
  void theCoordinatorSendsOnlyBeforeTheRetentionLessItsMargin() {
    SagaBranchRetention r = new SagaBranchRetention(Duration.ofDays(7));
    assertThat(r.sendHorizon()).isEqualTo(Duration.ofDays(6));
    assertThat(r.maySend(T0, T0.plus(Duration.ofDays(6)).minusMillis(1))).isTrue();
    assertThat(r.maySend(T0, T0.plus(Duration.ofDays(6)))).isFalse();
  }

  @Test
  void aDeadlinePlusRetryWindowPlusMarginLongerThanTheRetentionIsRefused() {
    SagaBranchRetention r = SagaBranchRetention.defaults();
    r.covering("order", Duration.ofDays(28), Duration.ofDays(1)); // 28 + 1 + 1 = 30: fits
    assertThatThrownBy(() -> r.covering("order", Duration.ofDays(28), Duration.ofDays(1).plusSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the deadline of saga 'order' + the retry window + the send margin")
        .hasMessageEndingWith("but was PT720H");
    assertThatThrownBy(() -> r.covering("order", Duration.ofDays(1), Duration.ofSeconds(-1)))
        .hasMessage("saga.retryWindow must be zero or positive, but was PT-1S");
  }
}
