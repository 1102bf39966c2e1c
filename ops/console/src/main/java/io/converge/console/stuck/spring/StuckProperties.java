package io.converge.console.stuck.spring;

import io.converge.console.inspect.StuckKind;
import io.converge.console.inspect.StuckThresholds;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code converge.stuck.*}: the stuck alerts. Immutable.
 *
 * @param enabled whether the {@code converge.stuck{kind}} gauges are registered (needs a {@code MeterRegistry}
 *     bean); default true
 * @param refreshInterval how often the counts are read; default 30 s
 * @param thresholds per kind ({@code consumer-dlq: 2m}); the others keep their defaults (1-5 minutes)
 * @param webhook the optional webhook told once about each newly stuck item
 */
@ConfigurationProperties("converge.stuck")
record StuckProperties(@DefaultValue("true") boolean enabled, @DefaultValue("30s") Duration refreshInterval,
    Map<StuckKind, Duration> thresholds, @DefaultValue Webhook webhook) {

  /**
   * {@code converge.stuck.webhook.*}.
   *
   * @param url where to POST; none (the default): no webhook
   * @param timeout how long one POST may take; default 5 s
   * @param maxAttempts the most POSTs per item; default 10
   * @param retryBase the first retry's delay, doubling; default 1 s
   * @param retryMax the longest retry delay; default 5 min
   * @param migrate apply the {@code converge_stuck_notified} migration at start-up; default true
   */
  record Webhook(URI url, @DefaultValue("5s") Duration timeout, @DefaultValue("10") int maxAttempts,
      @DefaultValue("1s") Duration retryBase, @DefaultValue("5m") Duration retryMax,
      @DefaultValue("true") boolean migrate) {
  }

  StuckThresholds stuckThresholds() {
    return StuckThresholds.defaults().with(thresholds);
  }
}
