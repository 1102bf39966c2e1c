package io.converge.outbox.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.outbox.DiscardingSink;
import io.converge.outbox.spi.RelayMetrics;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link CdcRelay.Builder#build()} validates and snapshots: the builder changed later reaches no built relay. */
class CdcRelayBuilderTest {

  private static CdcRelay.Builder valid() {
    return CdcRelay.builder().name("a").jdbcUrl("jdbc:postgresql://localhost:5432/db", "u", "secret")
        .sink(new DiscardingSink());
  }

  @Test
  void aBuiltRelayKeepsItsSettingsWhenTheBuilderChangesOrBuildsAnother() {
    RelayMetrics metrics = new RelayMetrics() {
    };
    CdcRelay.Builder builder = valid().schema("s1").sweep(Duration.ofSeconds(7), Duration.ofSeconds(3));
    CdcSettings first = ((DebeziumCdcRelay) builder.build()).settings();
    CdcSettings second = ((DebeziumCdcRelay) builder.name("b").schema("s2").metrics(metrics)
        .sweep(Duration.ofSeconds(9), Duration.ofSeconds(4)).build()).settings();
    builder.jdbcUrl("jdbc:postgresql://elsewhere:5432/other", "v", "w").maxAttempts(9);

    assertThat(first.name()).isEqualTo("a");
    assertThat(first.schema()).isEqualTo("s1");
    assertThat(first.jdbcUrl()).isEqualTo("jdbc:postgresql://localhost:5432/db");
    assertThat(first.sweepAge()).isEqualTo(Duration.ofSeconds(7));
    assertThat(first.metrics()).isSameAs(RelayMetrics.NONE);
    assertThat(first.delivery().maxAttempts()).isEqualTo(5);
    assertThat(second.name()).isEqualTo("b");
    assertThat(second.schema()).isEqualTo("s2");
    assertThat(second.metrics()).isSameAs(metrics);
    assertThat(second.user()).isEqualTo("u");
    assertThat(first.toString()).contains("name=a").doesNotContain("secret");
  }

  @Test
  void badSettingsFailAtBuildNamingTheSetting() {
    assertThatThrownBy(() -> valid().name("Has Space").build()).hasMessageStartingWith("cdc.name must match");
    assertThatThrownBy(() -> valid().maxAttempts(0).build())
        .hasMessage("cdc.maxAttempts must be between 1 and 1000, but was 0");
    assertThatThrownBy(() -> valid().sink(null).build()).hasMessage("cdc.sink must be set");
  }

  @Test
  void deliveryIsNamedAsThePollingRelaysWithAShorterRetryPace() {
    CdcSettings settings = ((DebeziumCdcRelay) valid().build()).settings();
    io.converge.outbox.DeliverySettings polling = io.converge.outbox.DeliverySettings.defaults();
    assertThat(settings.delivery()).as("retry 200 ms..10 s (the stream waits inline), the rest as polling's")
        .isEqualTo(new io.converge.outbox.DeliverySettings(polling.maxAttempts(), Duration.ofMillis(200),
            Duration.ofSeconds(10), polling.brokerBackoffBase(), polling.brokerBackoffMax()));
    assertThatThrownBy(() -> valid().brokerBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)).build())
        .hasMessage("cdc.brokerBackoffMax must be at least cdc.brokerBackoffBase (PT2S), but was PT1S");
    assertThatThrownBy(() -> valid().outageBackoff(Duration.ZERO, Duration.ofSeconds(1)).build())
        .as("the former name still sets it").hasMessage("cdc.brokerBackoffBase must be positive, but was PT0S");
    assertThatThrownBy(() -> valid().retryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)).build())
        .hasMessage("cdc.retryMax must be at least cdc.retryBase (PT2S), but was PT1S");
    assertThat(((DebeziumCdcRelay) valid().retryBase(Duration.ofMillis(300)).build()).settings().delivery()
        .retryBase()).isEqualTo(Duration.ofMillis(300));
  }
}
