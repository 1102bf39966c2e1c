package io.converge.outbox.cdc;

import io.converge.outbox.DeliverySettings;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.RelayMetrics;
import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The validated settings of one {@link CdcRelay}: an immutable snapshot of its {@link CdcRelay.Builder}
 * taken by {@link CdcRelay.Builder#build()}, so that the builder changed afterwards, or used for another
 * relay, does not reach a built relay. The running classes read only this. {@link #toString()} hides the
 * password.
 */
record CdcSettings(
    String name,
    String jdbcUrl,
    String user,
    String password,
    String schema,
    OutboxSink sink,
    DeliverySettings delivery,
    Duration offsetFlushInterval,
    Duration sweepAge,
    Duration sweepInterval,
    Duration heartbeatInterval,
    Duration metricsInterval,
    RelayMetrics metrics) {

  private static final Pattern NAME = Pattern.compile("[a-z0-9_]{1,40}");
  private static final Pattern SCHEMA = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  /**
   * Validates every setting.
   *
   * @throws IllegalArgumentException naming the setting and its value
   */
  CdcSettings {
    Require.matches("cdc.name", name, NAME);
    Require.that(jdbcUrl != null && jdbcUrl.startsWith("jdbc:postgresql://"), "cdc.jdbcUrl",
        "be jdbc:postgresql://host:port/db",
        jdbcUrl);
    Require.matches("cdc.schema", schema, SCHEMA);
    Objects.requireNonNull(sink, "cdc.sink must be set");
    Objects.requireNonNull(delivery, "cdc.delivery must be set (DeliverySettings.validated)");
    Require.atLeast("cdc.offsetFlushInterval", offsetFlushInterval, Duration.ofMillis(10), "10ms");
    Require.positive("cdc.sweepAge", sweepAge);
    Require.positive("cdc.sweepInterval", sweepInterval);
    Require.positive("cdc.heartbeatInterval", heartbeatInterval);
    Require.positive("cdc.metricsInterval", metricsInterval);
    Objects.requireNonNull(metrics, "cdc.metrics must be set");
  }

  @Override
  public String toString() {
    return "CdcSettings[name=" + name + ", jdbcUrl=" + jdbcUrl + ", user=" + user + ", password=***, schema="
        + schema + ", sink=" + sink.name() + ", " + delivery + ", offsetFlushInterval=" + offsetFlushInterval
        + ", sweep=" + sweepAge + "/" + sweepInterval + ", heartbeatInterval=" + heartbeatInterval
        + ", metricsInterval=" + metricsInterval + "]";
  }
}
