/**
 * The service-provider interface of the outbox relay: an {@link io.converge.outbox.spi.OutboxSink}
 * publishes {@link io.converge.outbox.spi.OutboxRecord}s to one broker (RocketMQ in
 * {@code io.converge.outbox.rocketmq}; Pulsar in its module), and {@link io.converge.outbox.spi.RelayMetrics}
 * receives what the relay counts.
 */
package io.converge.outbox.spi;
