package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The one purge scheduler: runs every interval, survives a failed run, stops when closed. */
class PurgeScheduleTest {

  @Test
  void runsEveryIntervalAndAFailedRunIsRetried() {
    AtomicInteger runs = new AtomicInteger();
    try (PurgeSchedule schedule = PurgeSchedule.start("test-purge", Duration.ofMillis(10), () -> {
      if (runs.incrementAndGet() == 1) {
        throw new IllegalStateException("database down");
      }
      return 5;
    })) {
      await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() >= 3);
      assertThat(schedule.isRunning()).isTrue();
      schedule.close();
      assertThat(schedule.isRunning()).isFalse();
    }
  }

  @Test
  void rejectsANonPositiveInterval() {
    assertThatThrownBy(() -> PurgeSchedule.start("x", Duration.ZERO, () -> 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("x.interval must be positive, but was PT0S");
  }
}
