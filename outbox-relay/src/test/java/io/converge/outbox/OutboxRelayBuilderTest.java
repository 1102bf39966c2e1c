package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.outbox.spi.OutboxSink;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** Bad settings fail at build() with the property path and the value. */
class OutboxRelayBuilderTest {

  private static final OutboxSink NOWHERE = new DiscardingSink();

  private static OutboxRelayBuilder valid() {
    return OutboxRelay.builder().dataSource(new PGSimpleDataSource()).sink(NOWHERE);
  }

  @Test
  void badSettingsNameThePropertyAndTheValue() {
    assertThatThrownBy(() -> valid().batchSize(0).build())
        .hasMessage("relay.batchSize must be between 1 and 10000, but was 0");
    assertThatThrownBy(() -> valid().maxAttempts(0).build())
        .hasMessage("relay.maxAttempts must be between 1 and 1000, but was 0");
    assertThatThrownBy(() -> valid().brokerBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)).build())
        .hasMessage("relay.brokerBackoffMax must be at least relay.brokerBackoffBase (PT2S), but was PT1S");
    assertThatThrownBy(() -> valid().idlePoll(Duration.ZERO, Duration.ofSeconds(1)).build())
        .hasMessage("relay.idlePollMin must be positive, but was PT0S");
    assertThatThrownBy(() -> valid().retention(Duration.ofDays(-1)).build())
        .hasMessage("relay.retention must be zero or positive, but was PT-24H");
    assertThatThrownBy(() -> valid().name("has space").build())
        .hasMessageStartingWith("relay.name must match");
    assertThatThrownBy(() -> OutboxRelay.builder().sink(NOWHERE).build())
        .hasMessage("relay.dataSource is required");
    assertThatThrownBy(() -> RocketMQSink.nameServer("bad host").build())
        .hasMessage("rocketmq.nameServer must be host:port[;host:port...], but was bad host");
    assertThatThrownBy(() -> RocketMQSink.nameServer("127.0.0.1:9876").maxMessageBytes(0).build())
        .hasMessage("rocketmq.maxMessageBytes must be between 1 and 67108864, but was 0");
  }
}
