package io.converge.saga.tcc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The retention's validation against the coordinator's window, and the call's. */
class TccRetentionTest {

  @Test
  void aRetentionShorterThanTheCoordinatorsGlobalTimeoutPlusRetryWindowIsRefused() {
    assertThatThrownBy(() -> TccRetention.of(Duration.ofHours(6)).covering(Duration.ofHours(5),
        Duration.ofHours(2))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("tcc.retention must be at least the coordinator's global timeout + retry window "
            + "(PT5H + PT2H = PT7H)")
        .hasMessageEndingWith("but was PT6H");
  }

  @Test
  void aRetentionCoveringTheWindowIsAccepted() {
    TccRetention r = TccRetention.of(Duration.ofHours(7)).covering(Duration.ofHours(5), Duration.ofHours(2));
    assertThat(r.retention()).isEqualTo(Duration.ofHours(7));
    assertThat(TccRetention.defaults().retention()).isEqualTo(Duration.ofDays(7));
    assertThat(TccRetention.defaults().covering(Duration.ofMinutes(30), Duration.ofDays(1)).globalTimeout())
        .isEqualTo(Duration.ofMinutes(30));
  }

  @Test
  void halfAWindowAndBadDurationsAreRefused() {
    assertThatThrownBy(() -> new TccRetention(Duration.ofDays(1), Duration.ofMinutes(1), null))
        .hasMessageStartingWith("tcc.retention.coordinator must give both");
    assertThatThrownBy(() -> TccRetention.of(Duration.ZERO))
        .hasMessage("tcc.retention must be at least PT6H (longer than the broker's redelivery window), but was PT0S");
    assertThatThrownBy(() -> TccRetention.defaults().covering(Duration.ofMinutes(-1), Duration.ZERO))
        .hasMessage("tcc.retention.globalTimeout must be zero or positive, but was PT-1M");
  }

  @Test
  void aRetentionUnderSixHoursIsRefusedQuotingIt() {
    assertThatThrownBy(() -> TccRetention.of(Duration.ofHours(5).plusMinutes(59)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("tcc.retention must be at least PT6H (longer than the broker's redelivery window), "
            + "but was PT5H59M");
    assertThat(TccRetention.of(TccRetention.MIN_RETENTION).retention()).isEqualTo(Duration.ofHours(6));
  }

  @Test
  void aCallQuotesItsBadValue() {
    assertThatThrownBy(() -> new TccCall("t", " ", "b", TccOperation.TRY))
        .hasMessage("tcc.call.globalId must be 1 to 200 characters, not blank, but was ' '");
    assertThatThrownBy(() -> new TccCall(null, "g", "b", TccOperation.TRY))
        .hasMessage("tcc.call.tenant must be 1 to 128 characters, not blank, but was null");
    assertThatThrownBy(() -> new TccCall("t", "g", "b".repeat(201), TccOperation.TRY))
        .hasMessageStartingWith("tcc.call.branchId must be 1 to 200 characters");
    assertThatThrownBy(() -> TccOperation.fromWireName("TRY")).hasMessageEndingWith("but was 'TRY'");
  }
}
