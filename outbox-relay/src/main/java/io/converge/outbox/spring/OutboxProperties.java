package io.converge.outbox.spring;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code converge.outbox.*}: the outbox relay of a Spring Boot application (the producer itself is
 * configured by {@code converge.producer.*} with {@code mode=outbox}). Unset values take the relay's
 * defaults (see {@code OutboxRelayBuilder.Settings}).
 *
 * @param relayEnabled whether this application runs a relay; default true
 * @param nameServer RocketMQ name server list the relay publishes to; required when the relay is enabled
 * @param batchSize most rows per claim
 * @param maxAttempts refusals before a key is parked
 * @param retention how long published rows are kept
 * @param purgeInterval how often published rows are purged; zero disables
 */
@ConfigurationProperties("converge.outbox")
public record OutboxProperties(
    Boolean relayEnabled,
    String nameServer,
    Integer batchSize,
    Integer maxAttempts,
    Duration retention,
    Duration purgeInterval) {}
