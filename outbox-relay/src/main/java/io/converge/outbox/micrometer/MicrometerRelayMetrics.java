package io.converge.outbox.micrometer;

import io.converge.outbox.spi.RelayMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Relay metrics on Micrometer: {@code outbox.lag} (gauge, seconds: age of the oldest unpublished,
 * unparked row), {@code outbox.published} (counter; its rate is published/s), {@code outbox.parked}
 * (gauge: parked rows now) and {@code outbox.parked.total} (counter: keys parked); for the CDC relay also
 * {@code cdc.lag} (gauge, bytes: WAL between the server's position and the slot's confirmed position) and
 * {@code cdc.restarts} (counter: engine failures restarted). Needs
 * {@code io.micrometer:micrometer-core} (an optional dependency). Thread-safe.
 */
public final class MicrometerRelayMetrics implements RelayMetrics {

  private final Counter published;
  private final Counter parkedTotal;
  private final AtomicLong lagMillis = new AtomicLong();
  private final AtomicLong parkedNow = new AtomicLong();
  private final AtomicLong cdcLagBytes = new AtomicLong();
  private final Counter cdcRestarts;

  private MicrometerRelayMetrics(MeterRegistry registry) {
    this.published = Counter.builder("outbox.published").description("Outbox rows published").register(registry);
    this.parkedTotal = Counter.builder("outbox.parked.total").description("Outbox keys parked").register(registry);
    Gauge.builder("outbox.lag", lagMillis, v -> v.get() / 1000.0).baseUnit("seconds")
        .description("Age of the oldest unpublished outbox row").register(registry);
    Gauge.builder("outbox.parked", parkedNow, AtomicLong::get).description("Parked outbox rows").register(registry);
    Gauge.builder("cdc.lag", cdcLagBytes, AtomicLong::get).baseUnit("bytes")
        .description("WAL the CDC relay's slot has not confirmed yet").register(registry);
    this.cdcRestarts = Counter.builder("cdc.restarts").description("CDC engine failures restarted").register(registry);
  }

  /** Metrics registered in {@code registry}. */
  public static MicrometerRelayMetrics of(MeterRegistry registry) {
    return new MicrometerRelayMetrics(registry);
  }

  @Override
  public void published(int count) {
    published.increment(count);
  }

  @Override
  public void parked(String key) {
    parkedTotal.increment();
  }

  @Override
  public void lag(Duration age) {
    lagMillis.set(age.toMillis());
  }

  @Override
  public void parkedNow(long count) {
    parkedNow.set(count);
  }

  @Override
  public void cdcRestarted() {
    cdcRestarts.increment();
  }

  @Override
  public void cdcLag(long bytes) {
    cdcLagBytes.set(bytes);
  }
}
