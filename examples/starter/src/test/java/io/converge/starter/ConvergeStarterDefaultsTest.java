package io.converge.starter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

class ConvergeStarterDefaultsTest {

  @Test
  void oneRocketMQAddressIsTheDefaultOfTheThree() {
    StandardEnvironment env = processed(Map.of("converge.rocketmq.name-server", "ns:9876"));
    assertThat(env.getProperty("converge.producer.name-server")).isEqualTo("ns:9876");
    assertThat(env.getProperty("converge.outbox.name-server")).isEqualTo("ns:9876");
    assertThat(env.getProperty("converge.consumer.rocketmq.name-server")).isEqualTo("ns:9876");
  }

  @Test
  void aValueTheServiceSetsWins() {
    StandardEnvironment env = processed(Map.of("converge.rocketmq.name-server", "ns:9876",
        "converge.consumer.rocketmq.name-server", "other:9876", "converge.idempotency.enabled", "false"));
    assertThat(env.getProperty("converge.consumer.rocketmq.name-server")).isEqualTo("other:9876");
    assertThat(env.getProperty("converge.producer.name-server")).isEqualTo("ns:9876");
    assertThat(env.getProperty("converge.idempotency.enabled")).isEqualTo("false");
  }

  @Test
  void theIdempotencyKeyFilterIsOnAndNoAddressIsInvented() {
    StandardEnvironment env = processed(Map.of());
    assertThat(env.getProperty("converge.idempotency.enabled")).isEqualTo("true");
    assertThat(env.getProperty("converge.producer.name-server")).isNull();
  }

  /** An environment with the application's {@code values}, after the starter's defaults were applied. */
  private static StandardEnvironment processed(Map<String, Object> values) {
    StandardEnvironment env = new StandardEnvironment();
    env.getPropertySources().addFirst(new MapPropertySource("application", values));
    new ConvergeStarterDefaults().postProcessEnvironment(env, new SpringApplication());
    return env;
  }
}
