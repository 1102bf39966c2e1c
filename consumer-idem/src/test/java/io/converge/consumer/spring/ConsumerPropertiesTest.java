package io.converge.consumer.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** The outage settings of {@code converge.consumer.*}: defaults, binding, validation naming the property. */
class ConsumerPropertiesTest {

  private static ConsumerProperties bind(Map<String, String> values) {
    return new Binder(new MapConfigurationPropertySource(values)).bindOrCreate("converge.consumer",
        ConsumerProperties.class);
  }

  @Test
  void outageSettingsDefaultToThirtySecondsAndADay() {
    ConsumerProperties p = bind(Map.of("converge.consumer.policies.payments.max-attempts", "5"));
    assertThat(p.policy("payments").maxOutageBackoff()).isEqualTo(Duration.ofSeconds(30));
    assertThat(p.policy("unknown").maxOutageBackoff()).isEqualTo(Duration.ofSeconds(30));
    assertThat(p.rocketmq().consumeTimeout()).isEqualTo(Duration.ofHours(24));
    assertOrder(p, true, Duration.ofSeconds(1), Duration.ofSeconds(5));
  }

  @Test
  void orderSettingsBind() {
    ConsumerProperties p = bind(Map.of("converge.consumer.rocketmq.ordered", "false",
        "converge.consumer.rocketmq.suspend-time", "250ms", "converge.consumer.rocketmq.release-interval", "2s"));
    assertOrder(p, false, Duration.ofMillis(250), Duration.ofSeconds(2));
  }

  private static void assertOrder(ConsumerProperties p, boolean ordered, Duration suspendTime,
      Duration releaseInterval) {
    assertThat(p.rocketmq().ordered()).isEqualTo(ordered);
    assertThat(p.rocketmq().suspendTime()).isEqualTo(suspendTime);
    assertThat(p.rocketmq().releaseInterval()).isEqualTo(releaseInterval);
  }

  @Test
  void outageSettingsBindAndAreValidated() {
    ConsumerProperties p = bind(Map.of("converge.consumer.policies.payments.max-outage-backoff", "5s",
        "converge.consumer.rocketmq.consume-timeout", "2h", "converge.consumer.policies.bad.max-outage-backoff",
        "1ms"));
    assertThat(p.policy("payments").maxOutageBackoff()).isEqualTo(Duration.ofSeconds(5));
    assertThat(p.rocketmq().consumeTimeout()).isEqualTo(Duration.ofHours(2));
    assertThatThrownBy(() -> p.policy("bad")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "converge.consumer.policies.bad: policy.maxOutageBackoff must be between initialBackoff (PT0.2S) and 1h,"
                + " but was PT0.001S");
  }
}
