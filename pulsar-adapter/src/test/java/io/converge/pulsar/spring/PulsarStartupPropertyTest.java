package io.converge.pulsar.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/** {@code converge.startup.broker-wait}: its default, its binding and a bad value quoted. */
class PulsarStartupPropertyTest {

  @Test
  void theBrokerWaitIsBoundDefaultedAndValidated() {
    assertThat(PulsarAutoConfiguration.startupWait(environment(Map.of()))).isEqualTo(Duration.ofSeconds(60));
    assertThat(PulsarAutoConfiguration.startupWait(environment(Map.of("converge.startup.broker-wait", "15s"))))
        .isEqualTo(Duration.ofSeconds(15));
    assertThat(PulsarAutoConfiguration.startupWait(environment(Map.of("converge.startup.broker-wait", "0"))))
        .isZero();
    assertThatThrownBy(
        () -> PulsarAutoConfiguration.startupWait(environment(Map.of("converge.startup.broker-wait", "-5s"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("converge.startup.broker-wait must be between 0 and 1h, but was PT-5S");
  }

  private static StandardEnvironment environment(Map<String, Object> properties) {
    StandardEnvironment env = new StandardEnvironment();
    env.getPropertySources().addFirst(new MapPropertySource("test", properties));
    return env;
  }
}
