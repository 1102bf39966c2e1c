package io.converge.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.ProducerMetrics;
import io.converge.producer.internal.TxnLog;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class PulsarBackendTest {

  @Test
  void badSettingsAreRefusedQuotingTheValue() {
    assertThatThrownBy(() -> PulsarBackend.serviceUrl("http://x:8080"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pulsar.serviceUrl must be pulsar://host:port[,host:port...], but was http://x:8080");
    assertThatThrownBy(() -> PulsarBackend.serviceUrl(null)).isInstanceOf(IllegalArgumentException.class);
    PulsarBackend ok = PulsarBackend.serviceUrl("pulsar://127.0.0.1:6650");
    assertThatThrownBy(() -> ok.transactionTimeout(Duration.ofMillis(10)))
        .hasMessage("pulsar.transactionTimeout must be at least PT1S, but was PT0.01S");
    assertThatThrownBy(() -> ok.commitMargin(null)).hasMessageContaining("pulsar.commitMargin");
    assertThatThrownBy(() -> ok.sendTimeout(Duration.ZERO)).hasMessageContaining("pulsar.sendTimeout");
    assertThatThrownBy(() -> ok.recoveryInterval(Duration.ofMillis(1))).hasMessageContaining("pulsar.recoveryInterval");
    assertThat(ok.name()).isEqualTo("pulsar");
  }

  @Test
  void transactionTimeoutMustCoverTheLocalTimeoutAndTheMargin() {
    BackendContext context = new BackendContext("g", null, new TxnLog(null), Duration.ofSeconds(28), List.of(),
        ProducerMetrics.NONE, Clock.systemUTC());
    // 28 s + the default 5 s margin > 30 s: refused before any client is created
    assertThatThrownBy(() -> PulsarBackend.serviceUrl("pulsar://127.0.0.1:1").transactionTimeout(Duration.ofSeconds(30))
        .create(context))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pulsar.transactionTimeout must be at least the local-transaction timeout plus pulsar.commitMargin (PT33S), but was PT30S");
  }

  @Test
  void aCommitMarginShorterThanTheSendTimeoutIsRefused() {
    BackendContext context = new BackendContext("g", null, new TxnLog(null), Duration.ofSeconds(10), List.of(),
        ProducerMetrics.NONE, Clock.systemUTC());
    // the Pulsar commit may take the send timeout: with less margin it can land after the broker's abort
    assertThatThrownBy(
        () -> PulsarBackend.serviceUrl("pulsar://127.0.0.1:1").commitMargin(Duration.ofSeconds(2)).create(context))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pulsar.commitMargin must be at least pulsar.sendTimeout (PT3S), but was PT2S");
    assertThatThrownBy(() -> PulsarBackend.serviceUrl("pulsar://127.0.0.1:1").recoveryMaxAttempts(0))
        .hasMessage("pulsar.recoveryMaxAttempts must be between 1 and 1000, but was 0");
  }

  @Test
  void defaultTransactionTimeoutIsTheLocalTimeoutPlusTheMargin() {
    // with TxnProducer's default local-transaction timeout (30 s) the defaults work together
    assertThat(PulsarBackend.serviceUrl("pulsar://127.0.0.1:1").transactionTimeoutFor(Duration.ofSeconds(30)))
        .isEqualTo(Duration.ofSeconds(35));
    assertThat(PulsarBackend.serviceUrl("pulsar://127.0.0.1:1").commitMargin(Duration.ofSeconds(2))
        .transactionTimeoutFor(Duration.ofSeconds(10))).isEqualTo(Duration.ofSeconds(12));
    assertThat(PulsarBackend.serviceUrl("pulsar://127.0.0.1:1").transactionTimeout(Duration.ofSeconds(60))
        .transactionTimeoutFor(Duration.ofSeconds(10))).isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void theBuilderValidatesEverySettingInBuildQuotingTheValue() {
    String url = "pulsar://127.0.0.1:6650";
    assertThatThrownBy(() -> PulsarBackend.builder("pulsar:/x").build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pulsar.serviceUrl must be pulsar://host:port[,host:port...], but was pulsar:/x");
    assertThatThrownBy(() -> PulsarBackend.builder(url).transactionTimeout(Duration.ofMillis(999)).build())
        .hasMessage("pulsar.transactionTimeout must be at least PT1S, but was PT0.999S");
    assertThatThrownBy(() -> PulsarBackend.builder(url).commitMargin(Duration.ofMillis(99)).build())
        .hasMessage("pulsar.commitMargin must be at least PT0.1S, but was PT0.099S");
    assertThatThrownBy(() -> PulsarBackend.builder(url).sendTimeout(Duration.ofMillis(50)).build())
        .hasMessage("pulsar.sendTimeout must be at least PT0.1S, but was PT0.05S");
    assertThatThrownBy(() -> PulsarBackend.builder(url).recoveryInterval(Duration.ofMillis(10)).build())
        .hasMessage("pulsar.recoveryInterval must be at least PT0.1S, but was PT0.01S");
    assertThatThrownBy(() -> PulsarBackend.builder(url).recoveryMaxAttempts(1001).build())
        .hasMessage("pulsar.recoveryMaxAttempts must be between 1 and 1000, but was 1001");
    assertThatThrownBy(() -> PulsarBackend.builder(url).commitMargin(Duration.ofSeconds(2)).build())
        .as("the rule between two settings is checked in build too, before any producer uses it")
        .hasMessage("pulsar.commitMargin must be at least pulsar.sendTimeout (PT3S), but was PT2S");
    PulsarBackend built = PulsarBackend.builder(url).commitMargin(Duration.ofSeconds(4))
        .sendTimeout(Duration.ofSeconds(4))
        .recoveryMaxAttempts(3).build();
    assertThat(built.transactionTimeoutFor(Duration.ofSeconds(10))).isEqualTo(Duration.ofSeconds(14));
    assertThat(PulsarBackend.serviceUrl(url).transactionTimeoutFor(Duration.ofSeconds(30)))
        .as("serviceUrl(url) is builder(url).build()").isEqualTo(Duration.ofSeconds(35));
  }
}
