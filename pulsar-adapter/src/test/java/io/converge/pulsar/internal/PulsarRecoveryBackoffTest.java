package io.converge.pulsar.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.internal.Backoff;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Recovery's retry delays on the shared backoff are the ones it computed by hand before: doubling, capped, no jitter. */
class PulsarRecoveryBackoffTest {

  /** The hand-written rule it replaced: interval · 2^(attempts-1), at most 5 min or the interval when longer. */
  private static Duration before(Duration interval, int attempts) {
    Duration max = Duration.ofMinutes(5);
    Duration cap = max.compareTo(interval) > 0 ? max : interval;
    Duration d = interval.multipliedBy(1L << Math.min(attempts - 1, 20));
    return d.compareTo(cap) > 0 ? cap : d;
  }

  @Test
  void doublesTheRecoveryIntervalPerAttemptUpToFiveMinutes() {
    Backoff b = PulsarRecovery.backoff(Duration.ofSeconds(5));
    assertThat(b.ceiling(1)).isEqualTo(Duration.ofSeconds(5));
    assertThat(b.ceiling(2)).isEqualTo(Duration.ofSeconds(10));
    assertThat(b.ceiling(6)).isEqualTo(Duration.ofSeconds(160));
    assertThat(b.ceiling(7)).isEqualTo(Duration.ofMinutes(5));
    assertThat(b.ceiling(100)).isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void anIntervalLongerThanTheCapIsTheDelay() {
    Backoff b = PulsarRecovery.backoff(Duration.ofMinutes(10));
    assertThat(b.ceiling(1)).isEqualTo(Duration.ofMinutes(10));
    assertThat(b.ceiling(5)).isEqualTo(Duration.ofMinutes(10));
  }

  @Test
  void everyDelayIsTheOneComputedBefore() {
    for (Duration interval : new Duration[]{Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofSeconds(1),
        Duration.ofSeconds(5), Duration.ofSeconds(7), Duration.ofMinutes(5), Duration.ofMinutes(6)}) {
      Backoff b = PulsarRecovery.backoff(interval);
      for (int attempts = 1; attempts <= 40; attempts++) {
        assertThat(b.ceiling(attempts)).as("interval %s, attempt %d", interval, attempts)
            .isEqualTo(before(interval, attempts));
      }
    }
  }
}
