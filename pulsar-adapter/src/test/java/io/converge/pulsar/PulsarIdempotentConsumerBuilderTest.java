package io.converge.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.consumer.IdempotentHandler;
import java.time.Duration;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** The settings are validated in build(), before any client exists: each failure names the setting and its value. */
class PulsarIdempotentConsumerBuilderTest {

  private static final IdempotentHandler HANDLER = IdempotentHandler.builder().group("g").handler((c, m) -> {
  }).dataSource(new PGSimpleDataSource()).build();

  private static PulsarIdempotentConsumer.Builder valid() {
    return PulsarIdempotentConsumer.builder().serviceUrl("pulsar://127.0.0.1:6650").topic("t").handler(HANDLER);
  }

  @Test
  void refusesEachBadSettingNamingItAndItsValue() {
    assertThatThrownBy(() -> PulsarIdempotentConsumer.builder().topic(" ").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessage("pulsar.topic must not be blank, but was  ");
    assertThatThrownBy(() -> PulsarIdempotentConsumer.builder().topic("t").build())
        .hasMessage("pulsar.handler must be set, but was null");
    assertThatThrownBy(() -> PulsarIdempotentConsumer.builder().topic("t").handler(HANDLER).build())
        .hasMessage(
            "pulsar: exactly one of serviceUrl and client must be set, but serviceUrl was null and client null");
    assertThatThrownBy(() -> valid().consumers(65).build())
        .hasMessage("pulsar.consumers must be between 1 and 64, but was 65");
    assertThatThrownBy(() -> valid().receiverQueueSize(0).build())
        .hasMessage("pulsar.receiverQueueSize must be between 1 and 10000, but was 0");
    assertThatThrownBy(() -> valid().redeliveryDelay(Duration.ofSeconds(-1)).build())
        .hasMessageStartingWith("pulsar.redeliveryDelay must").hasMessageEndingWith("but was PT-1S");
    assertThatThrownBy(() -> valid().releaseInterval(Duration.ofMillis(5)).build())
        .hasMessage("pulsar.releaseInterval must be between 10 ms and 1 h, but was PT0.005S");
    assertThatThrownBy(() -> valid().initialPosition(null).build()).hasMessageContaining("pulsar.initialPosition");
  }

  @Test
  void startValidatesFirstAsBefore() {
    assertThatThrownBy(() -> valid().consumers(0).start())
        .hasMessage("pulsar.consumers must be between 1 and 64, but was 0");
  }

  @Test
  void buildAppliesTheDefaults() {
    PulsarIdempotentConsumer.Settings s = valid().build();
    assertThat(s.subscription()).as("the handler's group").isEqualTo("g");
    assertThat(s.consumers()).isEqualTo(4);
    assertThat(s.receiverQueueSize()).isEqualTo(100);
    assertThat(s.redeliveryDelay()).isEqualTo(Duration.ofSeconds(1));
    assertThat(s.initialPosition()).isEqualTo(SubscriptionInitialPosition.Earliest);
    assertThat(s.releaseInterval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(s.client()).isNull();
    assertThat(s.serviceUrl()).isEqualTo("pulsar://127.0.0.1:6650");
  }
}
