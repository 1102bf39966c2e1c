package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class RequireTest {

  @Test
  void messagesNameThePropertyAndQuoteTheValue() {
    assertThatThrownBy(() -> Require.between("relay.batchSize", 0, 1, 10000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("relay.batchSize must be between 1 and 10000, but was 0");
    assertThatThrownBy(() -> Require.positive("relay.pollInterval", Duration.ZERO))
        .hasMessage("relay.pollInterval must be positive, but was PT0S");
    assertThatThrownBy(() -> Require.notNegative("relay.retention", null))
        .hasMessage("relay.retention must be zero or positive, but was null");
    assertThatThrownBy(() -> Require.atLeast("x.window", Duration.ofMillis(5), Duration.ofSeconds(1), "1 s"))
        .hasMessage("x.window must be at least 1 s, but was PT0.005S");
    assertThatThrownBy(() -> Require.matches("x.name", "a b", Pattern.compile("[a-z]+")))
        .hasMessage("x.name must match [a-z]+, but was a b");
    assertThatThrownBy(() -> Require.present("x.dataSource", null))
        .isInstanceOf(NullPointerException.class).hasMessage("x.dataSource is required");
  }

  @Test
  void aDurationRangeIncludesItsEndsAndRefusesNull() {
    Duration min = Duration.ofMillis(10);
    Duration max = Duration.ofHours(1);
    assertThat(Require.between("c.interval", min, min, max, "10 ms and 1 h")).isEqualTo(min);
    assertThat(Require.between("c.interval", max, min, max, "10 ms and 1 h")).isEqualTo(max);
    assertThatThrownBy(() -> Require.between("c.interval", Duration.ofMillis(9), min, max, "10 ms and 1 h"))
        .hasMessage("c.interval must be between 10 ms and 1 h, but was PT0.009S");
    assertThatThrownBy(() -> Require.between("c.interval", max.plusMillis(1), min, max, "10 ms and 1 h"))
        .hasMessage("c.interval must be between 10 ms and 1 h, but was PT1H0.001S");
    assertThatThrownBy(() -> Require.between("c.interval", null, min, max, "10 ms and 1 h"))
        .hasMessage("c.interval must be between 10 ms and 1 h, but was null");
  }

  @Test
  void validValuesPassThrough() {
    assertThat(Require.between("n", 5L, 1L, 10L)).isEqualTo(5L);
    assertThat(Require.positive("d", Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
    assertThat(Require.present("p", "v")).isEqualTo("v");
  }
}
