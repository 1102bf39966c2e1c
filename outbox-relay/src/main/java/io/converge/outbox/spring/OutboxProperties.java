package io.converge.outbox.spring;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code converge.outbox.*}: the outbox relay of a Spring Boot application (the producer itself is
 * configured by {@code converge.producer.*} with {@code mode=outbox}). Unset values take the relay's
 * defaults (see {@code OutboxRelayBuilder.Settings}).
 *
 * @param relayEnabled whether this application runs a relay; default true
 * @param sink where the relay publishes: {@code rocketmq} (default) or {@code pulsar} (needs
 *     {@code converge-pulsar-adapter} and {@code converge.pulsar.service-url}); an application's own
 *     {@code OutboxSink} bean takes precedence over both
 * @param nameServer RocketMQ name server list the relay publishes to; required with the RocketMQ sink
 * @param batchSize most rows per claim
 * @param maxAttempts refusals before a key is parked
 * @param retention how long published rows are kept
 * @param purgeInterval how often published rows are purged; zero disables
 * @param outageBackoffMax longest wait between retries while the broker or the database is unavailable
 *     (capped exponential backoff with jitter from 200 ms; outages never count as attempts); default 30 s
 * @param retryBackoffBase first wait before a refused row is retried (doubling with jitter); default 1 s
 * @param retryBackoffMax longest wait between retries of a refused row; default 5 min
 */
@ConfigurationProperties("converge.outbox")
public record OutboxProperties(
    Boolean relayEnabled,
    String sink,
    String nameServer,
    Integer batchSize,
    Integer maxAttempts,
    Duration retention,
    Duration purgeInterval,
    Duration outageBackoffMax,
    Duration retryBackoffBase,
    Duration retryBackoffMax) {
}
