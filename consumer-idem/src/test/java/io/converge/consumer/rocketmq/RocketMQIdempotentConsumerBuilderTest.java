package io.converge.consumer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.consumer.IdempotentHandler;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** The settings are validated before any client is created: each failure names the property and quotes the value. */
class RocketMQIdempotentConsumerBuilderTest {

  private static RocketMQIdempotentConsumer.Builder valid() {
    IdempotentHandler handler = IdempotentHandler.builder().group("g").handler((c, m) -> {
    }).dataSource(new PGSimpleDataSource()).build();
    return RocketMQIdempotentConsumer.builder().nameServer("127.0.0.1:9876").topic("t").handler(handler);
  }

  @Test
  void refusesEachBadSettingNamingItAndItsValue() {
    assertThatThrownBy(() -> RocketMQIdempotentConsumer.builder().topic("t").start())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rocketmq.nameServer must not be blank, but was null");
    assertThatThrownBy(() -> RocketMQIdempotentConsumer.builder().nameServer("127.0.0.1:9876").topic(" ").start())
        .hasMessage("rocketmq.topic must not be blank, but was  ");
    assertThatThrownBy(() -> RocketMQIdempotentConsumer.builder().nameServer("127.0.0.1:9876").topic("t").start())
        .hasMessage("rocketmq.handler must be set, but was null");
    assertThatThrownBy(() -> valid().consumeThreads(0).start())
        .hasMessage("rocketmq.consumeThreads must be between 1 and 256, but was 0");
    assertThatThrownBy(() -> valid().redeliveryDelayLevel(19).start())
        .hasMessage("rocketmq.redeliveryDelayLevel must be between 0 and 18, but was 19");
    assertThatThrownBy(() -> valid().consumeTimeout(Duration.ofSeconds(59)).start())
        .hasMessage("rocketmq.consumeTimeout must be between 1 min and 7 d, but was PT59S");
    assertThatThrownBy(() -> valid().suspendTime(Duration.ofSeconds(31)).start())
        .hasMessage("rocketmq.suspendTime must be between 10 ms and 30 s, but was PT31S");
    assertThatThrownBy(() -> valid().releaseInterval(null).start())
        .hasMessage("rocketmq.releaseInterval must be between 10 ms and 1 h, but was null");
  }

  @Test
  void buildValidatesEverySettingWithoutStartingAClient() {
    assertThatThrownBy(() -> RocketMQIdempotentConsumer.builder().topic("t").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rocketmq.nameServer must not be blank, but was null");
    assertThatThrownBy(() -> valid().tags("").build()).hasMessage("rocketmq.tags must not be blank, but was ");
    assertThatThrownBy(() -> valid().consumeThreads(257).build())
        .hasMessage("rocketmq.consumeThreads must be between 1 and 256, but was 257");
    assertThatThrownBy(() -> valid().redeliveryDelayLevel(-1).build())
        .hasMessage("rocketmq.redeliveryDelayLevel must be between 0 and 18, but was -1");
    assertThatThrownBy(() -> valid().consumeTimeout(Duration.ofDays(8)).build())
        .hasMessage("rocketmq.consumeTimeout must be between 1 min and 7 d, but was PT192H");
    assertThatThrownBy(() -> valid().suspendTime(Duration.ofMillis(9)).build())
        .hasMessage("rocketmq.suspendTime must be between 10 ms and 30 s, but was PT0.009S");
    assertThatThrownBy(() -> valid().releaseInterval(Duration.ofHours(2)).build())
        .hasMessage("rocketmq.releaseInterval must be between 10 ms and 1 h, but was PT2H");
  }

  @Test
  void buildAppliesTheDefaults() {
    RocketMQIdempotentConsumer.Settings s = valid().build();
    assertThat(s.group()).as("the handler's group").isEqualTo("g");
    assertThat(s.tags()).isEqualTo("*");
    assertThat(s.consumeThreads()).isEqualTo(4);
    assertThat(s.ordered()).isTrue();
    assertThat(s.consumeTimeout()).isEqualTo(RocketMQIdempotentConsumer.DEFAULT_CONSUME_TIMEOUT);
    assertThat(s.suspendTime()).isEqualTo(RocketMQIdempotentConsumer.DEFAULT_SUSPEND_TIME);
    assertThat(s.releaseInterval()).isEqualTo(RocketMQIdempotentConsumer.DEFAULT_RELEASE_INTERVAL);
    assertThat(valid().group("other").build().group()).isEqualTo("other");
  }
}
