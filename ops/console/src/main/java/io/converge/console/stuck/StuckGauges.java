package io.converge.console.stuck;

import io.converge.console.inspect.Inspector;
import io.converge.console.inspect.StuckItem;
import io.converge.console.inspect.StuckKind;
import io.converge.core.internal.Require;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stuck alerts: one Micrometer gauge {@code converge.stuck} per {@link StuckKind} (tag {@code kind}, the kind's
 * slug: {@code outbox-parked}, {@code consumer-dlq}, ...), the number of items past the kind's threshold
 * ({@link Inspector#count}, thresholds of the inspector's {@code StuckThresholds}). The counts are read on a
 * schedule (every {@code refreshInterval}, default 30 s) by one thread, never per scrape; a gauge reads
 * {@code NaN} until the first refresh, and keeps its last value while the database fails (logged). With a
 * {@link StuckWebhook}, each refresh also notifies the webhook of every newly stuck item (once, across instances
 * and restarts) and retries the failed notifications that are due (the POSTs run on the webhook's own thread,
 * never on the refresh thread). Thread-safe; {@link #close} stops the refresh, closes the webhook and removes the
 * gauges.
 */
public final class StuckGauges implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(StuckGauges.class);

  /** The gauge's name. */
  public static final String METER = "converge.stuck";

  /** The most stuck items of one kind the webhook is told about per refresh (the oldest). */
  static final int WEBHOOK_BATCH = 1_000;

  private final Inspector inspector;
  private final MeterRegistry registry;
  private final Duration refreshInterval;
  private final StuckWebhook webhook;
  private final Map<StuckKind, AtomicLong> counts = new EnumMap<>(StuckKind.class);
  private final List<Meter> meters = new ArrayList<>();
  private final AtomicLong refreshes = new AtomicLong();
  private ScheduledExecutorService scheduler;

  private StuckGauges(Builder b) {
    this.inspector = b.inspector;
    this.registry = b.registry;
    this.refreshInterval = b.refreshInterval;
    this.webhook = b.webhook;
    for (StuckKind kind : StuckKind.values()) {
      counts.put(kind, new AtomicLong(-1));
    }
  }

  /** A builder; {@code inspector} and {@code registry} are required. */
  public static Builder builder() {
    return new Builder();
  }

  /** Registers the gauges and starts the refresh (the first one at once). Call once. */
  public synchronized StuckGauges start() {
    if (scheduler != null) {
      throw new IllegalStateException("StuckGauges already started");
    }
    for (StuckKind kind : StuckKind.values()) {
      AtomicLong count = counts.get(kind);
      meters.add(Gauge.builder(METER, count, c -> c.get() < 0 ? Double.NaN : c.get())
          .tag("kind", kind.slug()).description("items past the stuck threshold of their kind")
          .baseUnit("items").register(registry));
    }
    scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "converge-stuck-gauges");
      t.setDaemon(true);
      return t;
    });
    scheduler.scheduleWithFixedDelay(this::refreshQuietly, 0, refreshInterval.toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  /**
   * Reads every kind's count now (and notifies the webhook, if any). Called by the schedule; public for a caller
   * that wants fresh values at once.
   *
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   *     ({@code io.converge.core.DatabaseRefusedException} when it refuses a statement)
   */
  public void refresh() {
    for (StuckKind kind : StuckKind.values()) {
      long count = inspector.count(kind);
      counts.get(kind).set(count);
      if (webhook != null && count > 0) {
        List<StuckItem> items = inspector.list(kind, Inspector.Filter.stuck().limit(WEBHOOK_BATCH));
        webhook.notifyNew(items);
      }
    }
    if (webhook != null) {
      webhook.notifyNew(List.of()); // the retries that are due, whatever is stuck now
    }
    refreshes.incrementAndGet();
  }

  /** The last count of {@code kind}; -1 before the first refresh. */
  public long count(StuckKind kind) {
    return counts.get(kind).get();
  }

  /** How many refreshes completed. */
  public long refreshes() {
    return refreshes.get();
  }

  private void refreshQuietly() {
    try {
      refresh();
    } catch (RuntimeException e) {
      log.warn("Stuck gauges not refreshed (they keep their last values), next try in {}: {}", refreshInterval,
          e.toString());
    }
  }

  /** Stops the refresh, closes the webhook (if any) and removes the gauges. */
  @Override
  public synchronized void close() {
    if (scheduler != null) {
      scheduler.shutdownNow();
      try {
        scheduler.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (webhook != null) {
      webhook.close();
    }
    meters.forEach(registry::remove);
    meters.clear();
  }

  /** Builds {@link StuckGauges}. Not thread-safe. */
  public static final class Builder {

    private Inspector inspector;
    private MeterRegistry registry;
    private Duration refreshInterval = Duration.ofSeconds(30);
    private StuckWebhook webhook;

    private Builder() {
    }

    /** What is stuck, with the thresholds per kind; required. */
    public Builder inspector(Inspector inspector) {
      this.inspector = inspector;
      return this;
    }

    /** Where the gauges are registered; required. */
    public Builder registry(MeterRegistry registry) {
      this.registry = registry;
      return this;
    }

    /** How often the counts are read; default 30 s. */
    public Builder refreshInterval(Duration interval) {
      this.refreshInterval = interval;
      return this;
    }

    /** The webhook told about newly stuck items; default none. */
    public Builder webhook(StuckWebhook webhook) {
      this.webhook = webhook;
      return this;
    }

    /** The gauges (not started). @throws IllegalArgumentException for an invalid setting */
    public StuckGauges build() {
      Objects.requireNonNull(inspector, "stuck.inspector");
      Objects.requireNonNull(registry, "stuck.registry");
      Require.positive("stuck.refreshInterval", refreshInterval);
      return new StuckGauges(this);
    }
  }
}
