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
    StandardEnvironment env = environment(Map.of("converge.rocketmq.name-server", "ns:9876"));
    new ConvergeStarterDefaults().postProcessEnvironment(env, new SpringApplication());
    assertThat(env.getProperty("converge.producer.name-server")).isEqualTo("ns:9876");
    assertThat(env.getProperty("converge.outbox.name-server")).isEqualTo("ns:9876");
    assertThat(env.getProperty("converge.consumer.rocketmq.name-server")).isEqualTo("ns:9876");
  }

  @Test
  void aValueTheServiceSetsWins() {
    StandardEnvironment env = environment(Map.of("converge.rocketmq.name-server", "ns:9876",
        "converge.consumer.rocketmq.name-server", "other:9876", "converge.idempotency.enabled", "false"));
    new ConvergeStarterDefaults().postProcessEnvironment(env, new SpringApplication());
    assertThat(env.getProperty("converge.consumer.rocketmq.name-server")).isEqualTo("other:9876");
    assertThat(env.getProperty("converge.producer.name-server")).isEqualTo("ns:9876");
    assertThat(env.getProperty("converge.idempotency.enabled")).isEqualTo("false");
  }

  @Test
  void theIdempotencyKeyFilterIsOnAndNoAddressIsInvented() {
    StandardEnvironment env = environment(Map.of());
    new ConvergeStarterDefaults().postProcessEnvironment(env, new SpringApplication());
    assertThat(env.getProperty("converge.idempotency.enabled")).isEqualTo("true");
    assertThat(env.getProperty("converge.producer.name-server")).isNull();
  }

  private static StandardEnvironment environment(Map<String, Object> values) {
    StandardEnvironment env = new StandardEnvironment();
    env.getPropertySources().addFirst(new MapPropertySource("application", values));
    return env;
  }
}
