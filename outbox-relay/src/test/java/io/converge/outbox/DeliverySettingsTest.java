package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The relays' delivery settings: one rule, one set of defaults, errors naming the relay's setting and its value. */
class DeliverySettingsTest {

  private static final Duration S1 = Duration.ofSeconds(1);
  private static final Duration S2 = Duration.ofSeconds(2);

  @Test
  void theDefaultsAreThePollingRelaysOnes() {
    assertThat(DeliverySettings.defaults()).isEqualTo(new DeliverySettings(5, S1, Duration.ofMinutes(5),
        Duration.ofMillis(200), Duration.ofSeconds(30)));
  }

  @Test
  void eachBadValueFailsNamingTheSettingAndQuotingTheValue() {
    assertThatThrownBy(() -> DeliverySettings.validated("relay", 1001, S1, S2, S1, S2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("relay.maxAttempts must be between 1 and 1000, but was 1001");
    assertThatThrownBy(() -> DeliverySettings.validated("cdc", 5, Duration.ZERO, S2, S1, S2))
        .hasMessage("cdc.retryBase must be positive, but was PT0S");
    assertThatThrownBy(() -> DeliverySettings.validated("cdc", 5, S2, S1, S1, S2))
        .hasMessage("cdc.retryMax must be at least cdc.retryBase (PT2S), but was PT1S");
    assertThatThrownBy(() -> DeliverySettings.validated("relay", 5, S1, S2, null, S2))
        .hasMessage("relay.brokerBackoffBase must be positive, but was null");
    assertThatThrownBy(() -> DeliverySettings.validated("cdc", 5, S1, S2, S2, S1))
        .hasMessage("cdc.brokerBackoffMax must be at least cdc.brokerBackoffBase (PT2S), but was PT1S");
    assertThat(DeliverySettings.validated("relay", 1, S1, S1, S2, S2))
        .isEqualTo(new DeliverySettings(1, S1, S1, S2, S2));
  }

  @Test
  void thePollingRelayTakesARetryMaximum() {
    assertThatThrownBy(() -> OutboxRelay.builder().dataSource(new org.postgresql.ds.PGSimpleDataSource())
        .sink(new DiscardingSink()).retryBackoff(S2, S1).build())
        .hasMessage("relay.retryMax must be at least relay.retryBase (PT2S), but was PT1S");
  }
}
