package io.converge.outbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.outbox.DeliverySettings;
import io.converge.outbox.OutboxRelayBuilder.Settings;
import io.converge.outbox.DiscardingSink;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.RelayMetrics;
import io.converge.core.internal.Backoff;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The polling relay's pace, without a database or a clock: every pause is computed, none is waited. */
class PacingTest {

  private static final OutboxSink NOWHERE = new DiscardingSink();

  private static final Settings SETTINGS = new Settings("pace", null, NOWHERE, 100,
      new DeliverySettings(5, Duration.ofSeconds(1), Duration.ofMinutes(5), Duration.ofMillis(200),
          Duration.ofSeconds(2)),
      Duration.ofMillis(10), Duration.ofMillis(200), Duration.ofDays(1),
      Duration.ofMinutes(1), 1000, Duration.ofSeconds(5), RelayMetrics.NONE);

  /** No jitter: the ceiling of each step. */
  private static final DeliveryPolicy POLICY = new DeliveryPolicy(new OutboxRows(), 5,
      new Backoff(Duration.ofSeconds(1), Duration.ofMinutes(5), () -> 0.999999), Duration.ofMillis(200),
      new Backoff(Duration.ofMillis(200), Duration.ofSeconds(2), () -> 0.999999), RelayMetrics.NONE);

  private static RelayCycle.Result did(int published, int refused) {
    return new RelayCycle.Result(published, refused, 0, false, 0, false);
  }

  private static final RelayCycle.Result UNAVAILABLE = new RelayCycle.Result(0, 0, 0, true, 3, false);

  @Test
  void aFullBatchRunsAgainAtOnceWorkPollsSoonAndIdlePollsDoubleUpToTheMaximum() {
    Pacing pacing = new Pacing(SETTINGS, POLICY);
    assertThat(pacing.after(did(100, 0))).isZero();
    assertThat(pacing.after(did(60, 40))).as("refusals are work too").isZero();
    assertThat(pacing.after(did(3, 0))).isEqualTo(Duration.ofMillis(10));
    assertThat(pacing.after(did(0, 0))).isEqualTo(Duration.ofMillis(10));
    assertThat(pacing.after(did(0, 0))).isEqualTo(Duration.ofMillis(20));
    assertThat(pacing.after(did(0, 0))).isEqualTo(Duration.ofMillis(40));
    assertThat(pacing.after(did(0, 0))).isEqualTo(Duration.ofMillis(80));
    assertThat(pacing.after(did(0, 0))).isEqualTo(Duration.ofMillis(160));
    assertThat(pacing.after(did(0, 0))).isEqualTo(Duration.ofMillis(200));
    assertThat(pacing.after(did(0, 0))).isEqualTo(Duration.ofMillis(200));
    assertThat(pacing.after(did(1, 0))).as("work resets the idle poll").isEqualTo(Duration.ofMillis(10));
    assertThat(pacing.after(did(0, 0))).isEqualTo(Duration.ofMillis(10));
  }

  @Test
  void anOutageBacksOffExponentiallyUpToTheMaximumAndEndsWithTheFirstAnswer() {
    Pacing pacing = new Pacing(SETTINGS, POLICY);
    assertThat(pacing.after(UNAVAILABLE)).isEqualTo(Duration.ofMillis(200));
    assertThat(pacing.after(UNAVAILABLE)).isEqualTo(Duration.ofMillis(400));
    assertThat(pacing.afterFailure(new java.sql.SQLException("database down"))).as("a database failure counts alike")
        .isEqualTo(Duration.ofMillis(800));
    assertThat(pacing.after(UNAVAILABLE)).isEqualTo(Duration.ofMillis(1600));
    assertThat(pacing.after(UNAVAILABLE)).isEqualTo(Duration.ofSeconds(2));
    assertThat(pacing.after(UNAVAILABLE)).isEqualTo(Duration.ofSeconds(2));
    assertThat(pacing.after(did(0, 0))).as("over: idle polling again").isEqualTo(Duration.ofMillis(10));
    assertThat(pacing.after(UNAVAILABLE)).as("a new outage starts from the base").isEqualTo(Duration.ofMillis(200));
  }

  @Test
  void idlePollsAreTheOnesComputedByHandBefore() {
    Settings settings = new Settings("pace", null, NOWHERE, 100,
        new DeliverySettings(5, Duration.ofSeconds(1), Duration.ofMinutes(5), Duration.ofMillis(200),
            Duration.ofSeconds(2)),
        Duration.ofMillis(7), Duration.ofMillis(1000), Duration.ofDays(1), Duration.ofMinutes(1),
        1000, Duration.ofSeconds(5), RelayMetrics.NONE);
    Pacing pacing = new Pacing(settings, POLICY);
    Duration before = settings.idlePollMin(); // the rule it replaced: pause, then min(max, pause · 2)
    for (int poll = 1; poll <= 100; poll++) {
      assertThat(pacing.after(did(0, 0))).as("empty poll %d", poll).isEqualTo(before);
      before = before.multipliedBy(2).compareTo(settings.idlePollMax()) <= 0 ? before.multipliedBy(2)
          : settings.idlePollMax();
    }
  }
}
