package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Exponential backoff with jitter: doubles per failure, capped, never zero, spread by the random source. */
class BackoffTest {

  @Test
  void doublesUpToTheCapWithHalfOfItJittered() {
    Backoff low = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(30), () -> 0.0);
    Backoff high = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(30), () -> 0.999999);
    assertThat(low.delay(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(high.delay(1)).isEqualTo(Duration.ofMillis(200));
    assertThat(low.delay(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(high.delay(4)).isEqualTo(Duration.ofMillis(1600));
    assertThat(high.delay(20)).isEqualTo(Duration.ofSeconds(30));
    assertThat(low.delay(1000)).isEqualTo(Duration.ofSeconds(15));
    assertThat(low.delay(0)).as("never a zero delay: no busy loop").isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void growsByItsMultiplierAndSpreadsByPlusOrMinusJitter() {
    Backoff b = Backoff.withJitter(Duration.ofMillis(100), Duration.ofSeconds(1), 3.0, 0.1, () -> 0.5);
    assertThat(b.ceiling(0)).isEqualTo(Duration.ofMillis(100));
    assertThat(b.ceiling(3)).isEqualTo(Duration.ofMillis(900));
    assertThat(b.ceiling(4)).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.delay(3)).isEqualTo(Duration.ofMillis(900));
    assertThat(b.delay(3, 0.0)).isEqualTo(Duration.ofMillis(810));
    assertThat(b.delay(4, 0.999999)).isEqualTo(Duration.ofMillis(1100));
  }
}
