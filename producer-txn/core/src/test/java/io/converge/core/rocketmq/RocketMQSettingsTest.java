package io.converge.core.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The shared client settings: defaults applied and every setting validated in build(), quoting the bad value. */
class RocketMQSettingsTest {

  @Test
  void buildAppliesTheDefaults() {
    assertThat(RocketMQSettings.builder("127.0.0.1:9876").build()).isEqualTo(new RocketMQSettings("127.0.0.1:9876",
        Duration.ofSeconds(3), 2, 4 * 1024 * 1024));
  }

  @Test
  void buildRefusesEachBadSettingNamingItAndQuotingTheValue() {
    assertThatThrownBy(() -> RocketMQSettings.builder("bad host").build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rocketmq.nameServer must be host:port[;host:port...], but was bad host");
    assertThatThrownBy(() -> RocketMQSettings.builder("a:1").sendTimeout(Duration.ofMillis(99)).build())
        .hasMessage("rocketmq.sendTimeout must be at least 100 ms, but was PT0.099S");
    assertThatThrownBy(() -> RocketMQSettings.builder("a:1").retries(17).build())
        .hasMessage("rocketmq.retries must be between 0 and 16, but was 17");
    assertThatThrownBy(() -> RocketMQSettings.builder("a:1").maxMessageBytes(0).build())
        .hasMessage("rocketmq.maxMessageBytes must be between 1 and 67108864, but was 0");
  }
}
