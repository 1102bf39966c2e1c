package io.converge.outbox;

import io.converge.core.tracing.Tracing;
import io.converge.outbox.internal.PollingRelay;
import io.converge.outbox.internal.TracedSink;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.RelayMetrics;
import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Builds an {@link OutboxRelay}. Defaults are applied and every setting is validated in {@link #build()},
 * which names the setting and the bad value. Not thread-safe.
 */
public final class OutboxRelayBuilder {

  /**
   * The validated settings of a relay.
   *
   * @param name the relay's name; default {@code outbox-relay-<random>}
   * @param dataSource the database holding {@code converge_outbox}; required
   * @param sink where rows are published; required; closed with the relay
   * @param batchSize most rows per claim; default 200
   * @param delivery attempts before a key is parked, the retry backoff of a refused row and the backoff during an
   *     outage of the broker or the database; default {@link DeliverySettings#defaults()}
   * @param idlePollMin delay after an empty poll that followed work; default 10 ms
   * @param idlePollMax longest delay between polls when idle; default 200 ms
   * @param retention how long published rows are kept; default 1 day
   * @param purgeInterval how often published rows are purged; default 1 min; zero disables
   * @param purgeBatchSize rows per purge transaction; default 1000
   * @param metricsInterval how often lag and parked count are read; default 5 s
   * @param metrics where to count; default nothing
   */
  public record Settings(
      String name,
      DataSource dataSource,
      OutboxSink sink,
      int batchSize,
      DeliverySettings delivery,
      Duration idlePollMin,
      Duration idlePollMax,
      Duration retention,
      Duration purgeInterval,
      int purgeBatchSize,
      Duration metricsInterval,
      RelayMetrics metrics) {
  }

  private String name = "outbox-relay-" + UUID.randomUUID().toString().substring(0, 8);
  private DataSource dataSource;
  private OutboxSink sink;
  private Tracing tracing = Tracing.global();
  private int batchSize = 200;
  private int maxAttempts = DeliverySettings.DEFAULT_MAX_ATTEMPTS;
  private Duration retryBase = DeliverySettings.DEFAULT_RETRY_BASE;
  private Duration retryMax = DeliverySettings.DEFAULT_RETRY_MAX;
  private Duration brokerBackoffBase = DeliverySettings.DEFAULT_BROKER_BACKOFF_BASE;
  private Duration brokerBackoffMax = DeliverySettings.DEFAULT_BROKER_BACKOFF_MAX;
  private Duration idlePollMin = Duration.ofMillis(10);
  private Duration idlePollMax = Duration.ofMillis(200);
  private Duration retention = Duration.ofDays(1);
  private Duration purgeInterval = Duration.ofMinutes(1);
  private int purgeBatchSize = 1000;
  private Duration metricsInterval = Duration.ofSeconds(5);
  private RelayMetrics metrics = RelayMetrics.NONE;

  OutboxRelayBuilder() {
  }

  /** The relay's name, used for its thread and logs. */
  public OutboxRelayBuilder name(String name) {
    this.name = name;
    return this;
  }

  /** The database holding {@code converge_outbox}. */
  public OutboxRelayBuilder dataSource(DataSource dataSource) {
    this.dataSource = dataSource;
    return this;
  }

  /** Where rows are published, e.g. {@code RocketMQSink.nameServer(ns).build()}; closed with the relay. */
  public OutboxRelayBuilder sink(OutboxSink sink) {
    this.sink = sink;
    return this;
  }

  /** Most rows claimed per transaction; default 200, 1 to 10000. */
  public OutboxRelayBuilder batchSize(int rows) {
    this.batchSize = rows;
    return this;
  }

  /** Refusals of one row before its key is parked; default 5, 1 to 1000. */
  public OutboxRelayBuilder maxAttempts(int attempts) {
    this.maxAttempts = attempts;
    return this;
  }

  /** First delay before a refused row is retried (then doubled, with jitter); default 1 s. */
  public OutboxRelayBuilder retryBase(Duration delay) {
    this.retryBase = delay;
    return this;
  }

  /**
   * Backoff between attempts to send a refused row: from {@code base}, doubling with jitter, up to {@code max};
   * defaults 1 s and 5 min (the same as the CDC relay's).
   */
  public OutboxRelayBuilder retryBackoff(Duration base, Duration max) {
    this.retryBase = base;
    this.retryMax = max;
    return this;
  }

  /**
   * Backoff while the broker or the database is unavailable: from {@code base}, doubling with jitter, up
   * to {@code max}; defaults 200 ms and 30 s. An outage never counts as an attempt and never parks a key.
   */
  public OutboxRelayBuilder brokerBackoff(Duration base, Duration max) {
    this.brokerBackoffBase = base;
    this.brokerBackoffMax = max;
    return this;
  }

  /** Idle polling: from {@code min} after work, doubling up to {@code max}; defaults 10 ms and 200 ms. */
  public OutboxRelayBuilder idlePoll(Duration min, Duration max) {
    this.idlePollMin = min;
    this.idlePollMax = max;
    return this;
  }

  /** How long published rows are kept; default 1 day. */
  public OutboxRelayBuilder retention(Duration retention) {
    this.retention = retention;
    return this;
  }

  /** How often published rows older than the retention are purged; default 1 min; zero disables. */
  public OutboxRelayBuilder purgeInterval(Duration interval) {
    this.purgeInterval = interval;
    return this;
  }

  /** Rows deleted per purge transaction; default 1000. */
  public OutboxRelayBuilder purgeBatchSize(int rows) {
    this.purgeBatchSize = rows;
    return this;
  }

  /** How often the lag and parked count are read for the metrics; default 5 s. */
  public OutboxRelayBuilder metricsInterval(Duration interval) {
    this.metricsInterval = interval;
    return this;
  }

  /** Where to count, e.g. {@code MicrometerRelayMetrics.of(registry)}; default nothing. */
  public OutboxRelayBuilder metrics(RelayMetrics metrics) {
    this.metrics = metrics;
    return this;
  }

  /**
   * Where the PRODUCER span {@code "send {topic}"} of each row sent goes, linked to the creation context stored with
   * the row; default {@link Tracing#global()} (nothing without the OpenTelemetry API).
   * {@code OpenTelemetryTracing.of(openTelemetry)} names an instance.
   */
  public OutboxRelayBuilder tracing(Tracing tracing) {
    this.tracing = Objects.requireNonNull(tracing, "relay.tracing");
    return this;
  }

  /**
   * Validates the settings and returns the relay, not started.
   *
   * @throws IllegalArgumentException naming the setting and its bad value
   */
  public OutboxRelay build() {
    Require.that(name != null && name.matches("[A-Za-z0-9_.-]{1,100}"), "relay.name", "match [A-Za-z0-9_.-]{1,100}",
        name);
    Require.present("relay.dataSource", dataSource);
    Require.present("relay.sink", sink);
    Require.between("relay.batchSize", batchSize, 1, 10_000);
    DeliverySettings delivery = DeliverySettings.validated("relay", maxAttempts, retryBase, retryMax,
        brokerBackoffBase, brokerBackoffMax);
    Require.between("relay.purgeBatchSize", purgeBatchSize, 1, 100_000);
    Require.positive("relay.idlePollMin", idlePollMin);
    Require.positive("relay.metricsInterval", metricsInterval);
    Require.atLeast("relay.idlePollMax", idlePollMax, idlePollMin, "relay.idlePollMin (" + idlePollMin + ")");
    Require.notNegative("relay.retention", retention);
    Require.notNegative("relay.purgeInterval", purgeInterval);
    return new PollingRelay(
        new Settings(name, dataSource, TracedSink.wrap(sink, tracing), batchSize, delivery, idlePollMin, idlePollMax,
            retention, purgeInterval, purgeBatchSize, metricsInterval,
            Objects.requireNonNull(metrics, "relay.metrics")));
  }
}
