package io.converge.outbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.outbox.DeliverySettings;
import io.converge.outbox.OutboxRelayBuilder.Settings;
import io.converge.outbox.DiscardingSink;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.RelayMetrics;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The polling relay's loop with an injected clock and sleeper, on a database that refuses every
 * connection (a closed port, no server): it backs off exponentially up to the maximum, never waits for
 * real, and a close ends it.
 */
class PollingRelayTest {

  /** A clock the sleeper moves: each pause advances it by the pause. */
  private static final class FakeTime extends Clock {

    private volatile Instant now = Instant.parse("2026-01-01T00:00:00Z");
    final List<Duration> pauses = new CopyOnWriteArrayList<>();

    final Sleeper sleeper = pause -> {
      pauses.add(pause);
      now = now.plus(pause);
      Thread.onSpinWait();
    };

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }

  private static final OutboxSink NOWHERE = new DiscardingSink();

  @Test
  void aRefusedDatabaseIsRetriedWithCappedBackoffOnTheInjectedClockWithoutRealWaits() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: connections are refused at once
    }
    PGSimpleDataSource down = new PGSimpleDataSource();
    down.setUrl("jdbc:postgresql://127.0.0.1:" + port + "/nothing");
    Settings settings = new Settings("down", down, NOWHERE, 10,
        new DeliverySettings(5, Duration.ofSeconds(1), Duration.ofMinutes(5), Duration.ofMillis(200),
            Duration.ofSeconds(30)),
        Duration.ofMillis(10), Duration.ofMillis(200), Duration.ofDays(1), Duration.ZERO, 1000,
        Duration.ofMinutes(1), RelayMetrics.NONE);
    FakeTime time = new FakeTime();
    long start = System.nanoTime();
    PollingRelay relay = new PollingRelay(settings, time, time.sleeper);
    try {
      relay.start();
      await().atMost(Duration.ofSeconds(30)).until(() -> time.pauses.size() >= 12);
    } finally {
      relay.close();
    }
    List<Duration> pauses = List.copyOf(time.pauses).subList(0, 12);
    for (int i = 0; i < pauses.size(); i++) {
      long ceiling = Math.min(200L << i, 30_000);
      assertThat(pauses.get(i).toMillis()).as("pause %d: jittered in [ceiling/2, ceiling]", i + 1)
          .isBetween(ceiling / 2, ceiling);
    }
    assertThat(time.pauses.stream().mapToLong(Duration::toMillis).sum()).as("minutes of backoff on the clock")
        .isGreaterThan(60_000);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).as("none of it waited for real")
        .isLessThan(Duration.ofSeconds(30));
  }
}
