package io.converge.outbox.cdc;

import io.converge.outbox.spi.OutboxSink;
import io.converge.producer.ConvergeException;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The outbox's second relay mode: reads new {@code converge_outbox} rows from PostgreSQL's WAL with
 * Debezium's embedded engine (pgoutput, no snapshot) and publishes them through the same
 * {@link OutboxSink} SPI as the polling relay, in commit order, then marks them published.
 *
 * <p>Lifecycle: {@link #start()} creates the publication (inserts of {@code converge_outbox} only)
 * and, through Debezium, the replication slot if they are missing, and resumes from the offset stored
 * in {@code converge_cdc_offset}; {@link #close()} stops and keeps slot and offsets, so a restart
 * continues where the last flushed offset was (a crash replays at most what arrived since the last
 * flush, {@link Builder#offsetFlushInterval(Duration)}: duplicates, absorbed by consumers by message
 * id); {@link #dropSlot()} removes slot, publication and offsets when this relay is retired, since a
 * slot nobody reads keeps WAL forever.
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
   * Sends the parked rows of {@code key} again, in seq order, with a fresh attempt count, and marks
   * them published; rows the broker still refuses are parked again. The WAL has moved past them, so
   * this (not {@code Outbox.resume}, which is for the polling relay) is how a CDC relay resumes a key;
   * new rows of the key wait while it runs. Blocks until every row is sent or parked again.
   *
   * @return the number of rows published
   */
  int resume(String key);

  /** Rows published since start. */
  long published();

  /** Rows parked since start (refused by the broker {@code maxAttempts} times, or behind such a row of their key). */
  long parked();

  /** The settings of a {@link CdcRelay}; validated by {@link #build()}. */
  final class Builder {
    private static final Pattern NAME = Pattern.compile("[a-z0-9_]{1,40}");
    private static final Pattern SCHEMA = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

    String name;
    String jdbcUrl;
    String user;
    String password;
    String schema = "public";
    OutboxSink sink;
    int maxAttempts = 5;
    Duration retryBase = Duration.ofMillis(200);
    Duration retryMax = Duration.ofSeconds(10);
    Duration offsetFlushInterval = Duration.ofSeconds(1);

    private Builder() {}

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

    /** Backoff between attempts (doubling from {@code base} to {@code max}); default 200 ms to 10 s. */
    public Builder retryBackoff(Duration base, Duration max) {
      this.retryBase = base;
      this.retryMax = max;
      return this;
    }

    /** How often the read position is stored: the most a crash replays; default 1 s. */
    public Builder offsetFlushInterval(Duration interval) {
      this.offsetFlushInterval = interval;
      return this;
    }

    /**
     * Validates and builds (does not start).
     *
     * @throws IllegalArgumentException naming the setting and its value
     * @throws ConvergeException naming the Debezium artifacts when they are not on the class path
     */
    public CdcRelay build() {
      if (name == null || !NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("cdc.name must match " + NAME.pattern() + ", but was " + name);
      }
      if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql://")) {
        throw new IllegalArgumentException("cdc.jdbcUrl must be jdbc:postgresql://host:port/db, but was " + jdbcUrl);
      }
      if (schema == null || !SCHEMA.matcher(schema).matches()) {
        throw new IllegalArgumentException("cdc.schema must match " + SCHEMA.pattern() + ", but was " + schema);
      }
      Objects.requireNonNull(sink, "cdc.sink must be set");
      if (maxAttempts < 1 || maxAttempts > 1000) {
        throw new IllegalArgumentException("cdc.maxAttempts must be between 1 and 1000, but was " + maxAttempts);
      }
      if (retryBase == null || retryMax == null || retryBase.isNegative() || retryMax.compareTo(retryBase) < 0) {
        throw new IllegalArgumentException("cdc.retryBackoff must be 0 <= base <= max, but was " + retryBase + ", " + retryMax);
      }
      if (offsetFlushInterval == null || offsetFlushInterval.toMillis() < 10) {
        throw new IllegalArgumentException("cdc.offsetFlushInterval must be at least 10ms, but was " + offsetFlushInterval);
      }
      try {
        Class.forName("io.debezium.connector.postgresql.PostgresConnector", false, CdcRelay.class.getClassLoader());
        Class.forName("io.debezium.embedded.async.AsyncEmbeddedEngine", false, CdcRelay.class.getClassLoader());
      } catch (ClassNotFoundException e) {
        throw new ConvergeException("The CDC relay needs io.debezium:debezium-embedded and"
            + " io.debezium:debezium-connector-postgres (3.6.1.Final) on the class path", e);
      }
      return new DebeziumCdcRelay(this);
    }
  }
}
