package io.converge.outbox.cdc;

import io.converge.core.tracing.Tracing;
import io.converge.outbox.internal.TracedSink;
import io.converge.outbox.DeliverySettings;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.RelayMetrics;
import io.converge.core.ConvergeException;
import io.converge.core.internal.OptionalDependency;
import java.time.Duration;

/**
 * The outbox's second relay mode: reads new {@code converge_outbox} rows from PostgreSQL's WAL with
 * Debezium's embedded engine (pgoutput, no snapshot) and publishes them through the same
 * {@link OutboxSink} SPI as the polling relay, per key in seq order (the commit order of a key, see
 * {@code OutboxBackend}), then marks them published.
 *
 * <p>Two paths publish, both with the polling relay's per-key head-of-line rule and a conditional mark
 * (a row marked by one path is not sent by the other; only a crash between send and mark sends a row
 * twice, with the same message id: at-least-once): the <em>stream</em> sends, for the keys of each WAL
 * batch, every unpublished row of the key whose head is not parked; the <em>sweeper</em> sends, every
 * {@link Builder#sweep sweep interval}, unpublished rows older than the sweep age that no stream event
 * brought: rows committed before the slot existed (first start, a switch from polling, a slot dropped
 * and re-created or lost in a failover), rows resumed with {@code Outbox.resume} / {@code converge
 * outbox resume}, rows left by an outage.
 *
 * <p>Lifecycle: {@link #start()} creates the publication (inserts of {@code converge_outbox} only) and
 * the replication slot if they are missing, before it returns, then starts the engine, which resumes
 * from the offset stored in {@code converge_cdc_offset}. An engine that fails (walsender terminated,
 * database restarted) is restarted with capped exponential backoff and jitter ({@link Builder#brokerBackoff});
 * {@link #health()} and the {@code cdc.restarts} metric show it. {@link #close()} stops and keeps slot
 * and offsets, so a restart continues where the last flushed offset was (a crash replays at most what
 * arrived since the last flush, {@link Builder#offsetFlushInterval(Duration)}); {@link #dropSlot()}
 * removes slot, publication and offsets when this relay is retired, since a slot nobody reads keeps WAL
 * forever. The relay's threads are daemon threads, and when the application's {@code main} has returned
 * and only the relay's threads are left, the relay closes itself so the JVM can exit.
 *
 * <p>Run either this relay or polling relays on one outbox, not both. Thread-safe.
 */
public interface CdcRelay extends AutoCloseable {

  /** A builder; {@code name}, {@code jdbcUrl} and {@code sink} are required. */
  static Builder builder() {
    return new Builder();
  }

  /** Starts reading the WAL. Idempotent. */
  void start();

  /** The replication slot (and publication) name of this relay: {@code converge_cdc_<name>}. */
  String slotName();

  /** Stops reading; keeps the slot and the offsets. Idempotent. */
  @Override
  void close();

  /** Stops, then drops the replication slot, the publication and the stored offsets of this relay. */
  void dropSlot();

  /**
   * Resumes the parked key {@code key} and sends its rows: {@code resume(null, null, key)}.
   *
   * @return the number of rows published
   * @throws io.converge.outbox.AmbiguousKeyException when the key is parked for more than one tenant or
   *     topic (nothing resumed)
   */
  default int resume(String key) {
    return resume(null, null, key);
  }

  /**
   * Resumes the parked line of {@code key} of {@code tenant} on {@code topic} (null: any, as long as one
   * parked line matches; {@code Outbox.resume}: fresh attempt count) and sends the key's rows at once, in
   * seq order, marking them published; a row the broker still refuses {@code maxAttempts} times is parked
   * again. Works on a stopped relay too (e.g. one built with a sink whose limits were raised).
   * {@code Outbox.resume} / {@code converge outbox resume KEY} alone works as well: the sweeper sends
   * the resumed rows once they are older than the sweep age. Blocks until every row is sent or parked
   * again.
   *
   * @return the number of rows published
   * @throws io.converge.outbox.AmbiguousKeyException when more than one parked line of the key matches
   *     (nothing resumed)
   * @throws io.converge.core.BrokerUnavailableException when the broker is unavailable; the key stays
   *     resumed and the sweeper sends it later
   */
  int resume(String tenant, String topic, String key);

  /** Rows published since start. */
  long published();

  /** Rows parked since start (refused by the broker {@code maxAttempts} times; the key's later rows wait). */
  long parked();

  /**
   * The state of the relay.
   *
   * @param running the engine is running (started, not failed, not closed)
   * @param restarts engine failures restarted since start
   * @param lastFailure the last engine failure, or null
   * @param lagBytes the slot's lag in bytes of WAL ({@code cdc.lag}), -1 when it could not be read
   */
  record Health(boolean running, long restarts, String lastFailure, long lagBytes) {
  }

  /** Reads the current state (one query for the lag). */
  Health health();

  /**
   * The CDC relay's default first delay before a refused row is retried: 200 ms. The stream delivers a batch's keys
   * inline and retries a refused row before it goes on, so every other key waits through the retries; with the
   * polling relay's 1 s..5 min a row refused 5 times would hold the whole stream about 15 s (1 + 2 + 4 + 8), with
   * these about 3 s. The polling relay retries a refused row in a later poll and keeps the longer pace.
   */
  Duration DEFAULT_RETRY_BASE = Duration.ofMillis(200);

  /** The CDC relay's default longest delay between retries of a refused row: 10 s (see {@link #DEFAULT_RETRY_BASE}). */
  Duration DEFAULT_RETRY_MAX = Duration.ofSeconds(10);

  /**
   * The settings of a {@link CdcRelay}; {@link #build()} validates them and gives the relay a snapshot, so
   * changing the builder afterwards, or building another relay from it, leaves a built relay alone. Not
   * thread-safe.
   */
  final class Builder {

    String name;
    String jdbcUrl;
    String user;
    String password;
    String schema = "public";
    OutboxSink sink;
    Tracing tracing = Tracing.global();
    int maxAttempts = DeliverySettings.DEFAULT_MAX_ATTEMPTS;
    Duration retryBase = DEFAULT_RETRY_BASE;
    Duration retryMax = DEFAULT_RETRY_MAX;
    Duration offsetFlushInterval = Duration.ofSeconds(1);
    Duration sweepAge = Duration.ofSeconds(30);
    Duration sweepInterval = Duration.ofSeconds(5);
    Duration heartbeatInterval = Duration.ofSeconds(10);
    Duration brokerBackoffBase = DeliverySettings.DEFAULT_BROKER_BACKOFF_BASE;
    Duration brokerBackoffMax = DeliverySettings.DEFAULT_BROKER_BACKOFF_MAX;
    Duration metricsInterval = Duration.ofSeconds(5);
    RelayMetrics metrics = RelayMetrics.NONE;

    private Builder() {
    }

    /** The relay's name: slot and publication {@code converge_cdc_<name>}; lower-case letters, digits, _. */
    public Builder name(String name) {
      this.name = name;
      return this;
    }

    /** The outbox's database, {@code jdbc:postgresql://host:port/db}; the user needs the REPLICATION attribute. */
    public Builder jdbcUrl(String url, String user, String password) {
      this.jdbcUrl = url;
      this.user = user;
      this.password = password;
      return this;
    }

    /** The schema of {@code converge_outbox}; default {@code public}. */
    public Builder schema(String schema) {
      this.schema = schema;
      return this;
    }

    /** Where rows are published. */
    public Builder sink(OutboxSink sink) {
      this.sink = sink;
      return this;
    }

    /** Refusals of one row before it (and the rest of its key) is parked; default 5. */
    public Builder maxAttempts(int attempts) {
      this.maxAttempts = attempts;
      return this;
    }

    /**
     * Backoff between attempts to send a refused row: from {@code base}, doubling with jitter, up to {@code max};
     * defaults {@link #DEFAULT_RETRY_BASE} (200 ms) and {@link #DEFAULT_RETRY_MAX} (10 s), shorter than the polling
     * relay's: the stream retries a refused row inline and every other key waits meanwhile.
     */
    public Builder retryBackoff(Duration base, Duration max) {
      this.retryBase = base;
      this.retryMax = max;
      return this;
    }

    /** First delay before a refused row is retried (then doubled up to the retry maximum); default 200 ms. */
    public Builder retryBase(Duration delay) {
      this.retryBase = delay;
      return this;
    }

    /** How often the read position is stored: the most a crash replays; default 1 s. */
    public Builder offsetFlushInterval(Duration interval) {
      this.offsetFlushInterval = interval;
      return this;
    }

    /**
     * The sweeper: every {@code interval}, unpublished rows at least {@code age} old (by
     * {@code created_at}, the start of their transaction) that the stream did not deliver are sent with
     * the polling relay's claim; defaults 30 s and 5 s. The age keeps the sweeper off rows the stream is
     * about to deliver.
     */
    public Builder sweep(Duration age, Duration interval) {
      this.sweepAge = age;
      this.sweepInterval = interval;
      return this;
    }

    /**
     * Debezium's {@code heartbeat.interval.ms}: how often the relay replaces its row in
     * {@code converge_cdc_heartbeat} (its {@code heartbeat.action.query}; the table is in the relay's
     * publication) so that its slot confirms a newer position when only other tables change (otherwise
     * the slot holds WAL until the next outbox row); default 10 s.
     */
    public Builder heartbeatInterval(Duration interval) {
      this.heartbeatInterval = interval;
      return this;
    }

    /**
     * Backoff while the broker or the database is unavailable, and between restarts of a failed engine:
     * from {@code base}, doubling with jitter, up to {@code max}; defaults 200 ms and 30 s (the same as the
     * polling relay's). Outages never count as attempts.
     */
    public Builder brokerBackoff(Duration base, Duration max) {
      this.brokerBackoffBase = base;
      this.brokerBackoffMax = max;
      return this;
    }

    /**
     * {@link #brokerBackoff(Duration, Duration)}, its former name.
     *
     * @deprecated use {@link #brokerBackoff(Duration, Duration)}, named as the polling relay's
     */
    @Deprecated
    public Builder outageBackoff(Duration base, Duration max) {
      return brokerBackoff(base, max);
    }

    /** Where to count ({@code outbox.published}, {@code outbox.parked.total}, {@code cdc.lag}, {@code cdc.restarts}); default nothing. */
    public Builder metrics(RelayMetrics metrics) {
      this.metrics = metrics;
      return this;
    }

    /** How often {@code cdc.lag} is read; default 5 s. */
    public Builder metricsInterval(Duration interval) {
      this.metricsInterval = interval;
      return this;
    }

    /**
     * Where the PRODUCER span {@code "send {topic}"} of each row sent goes, linked to the creation context stored with
     * the row; default {@link Tracing#global()} (nothing without the OpenTelemetry API).
     */
    public Builder tracing(Tracing tracing) {
      this.tracing = java.util.Objects.requireNonNull(tracing, "cdc.tracing");
      return this;
    }

    /**
     * Validates and builds (does not start).
     *
     * @throws IllegalArgumentException naming the setting and its value
     * @throws ConvergeException naming the Debezium artifacts when they are not on the class path
     */
    public CdcRelay build() {
      CdcSettings settings = new CdcSettings(name, jdbcUrl, user, password, schema, TracedSink.wrap(sink, tracing),
          DeliverySettings.validated("cdc", maxAttempts, retryBase, retryMax, brokerBackoffBase, brokerBackoffMax),
          offsetFlushInterval, sweepAge, sweepInterval, heartbeatInterval, metricsInterval, metrics);
      OptionalDependency.require("The CDC relay",
          "io.debezium:debezium-embedded and io.debezium:debezium-connector-postgres",
          "3.6.1.Final", CdcRelay.class, "io.debezium.connector.postgresql.PostgresConnector",
          "io.debezium.embedded.async.AsyncEmbeddedEngine");
      return new DebeziumCdcRelay(settings);
    }
  }
}
