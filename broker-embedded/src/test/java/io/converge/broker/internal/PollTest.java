package io.converge.broker.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The embedded servers' one wait with a deadline: looks until an answer, gives up after the deadline, maps interrupts. */
class PollTest {

  private static final Duration NO_PAUSE = Duration.ZERO;

  @Test
  void returnsTheFirstAnswerAndLooksNoMore() throws InterruptedException {
    AtomicInteger looks = new AtomicInteger();
    assertThat(Poll.value(Duration.ofMinutes(1), NO_PAUSE, () -> looks.incrementAndGet() == 3 ? "third" : null))
        .isEqualTo("third");
    assertThat(looks).hasValue(3);
    assertThat(Poll.until(Duration.ofMinutes(1), NO_PAUSE, () -> true)).isTrue();
  }

  @Test
  void aLookAfterTheDeadlineStillCountsThenItGivesUp() throws InterruptedException {
    AtomicInteger looks = new AtomicInteger();
    assertThat(Poll.value(Duration.ZERO, NO_PAUSE, () -> looks.incrementAndGet() == 1 ? "late" : null))
        .isEqualTo("late");
    assertThat(Poll.until(Duration.ZERO, NO_PAUSE, () -> false)).isFalse();
    assertThatThrownBy(() -> Poll.until(Duration.ZERO, NO_PAUSE, () -> false,
        () -> new IllegalStateException("no route within PT0S"), e -> new IllegalStateException("interrupted", e)))
        .isInstanceOf(IllegalStateException.class).hasMessage("no route within PT0S");
  }

  @Test
  void aLookThatThrowsEndsTheWait() {
    assertThatThrownBy(() -> Poll.value(Duration.ofMinutes(1), NO_PAUSE, () -> {
      throw new AssertionError("the child exited");
    })).isInstanceOf(AssertionError.class).hasMessage("the child exited");
  }

  @Test
  void anInterruptedWaitThrowsTheCallersErrorAndKeepsTheInterrupt() {
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> Poll.value(Duration.ofMinutes(1), Duration.ofMillis(20), () -> null,
          () -> new AssertionError("timed out"), e -> new AssertionError("interrupted", e)))
          .isInstanceOf(AssertionError.class).hasMessage("interrupted")
          .hasCauseInstanceOf(InterruptedException.class);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }
}
