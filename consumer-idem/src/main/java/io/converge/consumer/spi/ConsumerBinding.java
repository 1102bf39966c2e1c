package io.converge.consumer.spi;

import io.converge.consumer.IdempotentHandler;

/**
 * Connects an {@link IdempotentHandler} to a broker: the transport under {@code @IdempotentConsumer}.
 * The Spring auto-configuration uses the application's {@code ConsumerBinding} bean when there is one
 * (the Pulsar binding, or one's own), and otherwise RocketMQ on {@code converge.consumer.rocketmq.*}.
 *
 * <p>A binding acks a delivery only after {@link IdempotentHandler#handle} returned an outcome that
 * says so, and redelivers otherwise; it never assumes exactly-once delivery. Implementations are
 * thread-safe.
 */
@FunctionalInterface
public interface ConsumerBinding {

  /**
   * Starts delivering {@code topic}'s messages to {@code handler} as consumer group
   * {@link IdempotentHandler#group()}.
   *
   * @return the running subscription; closing it stops deliveries and releases the broker client
   * @throws Exception when the subscription cannot start (unknown topic, broker unreachable)
   */
  Subscription subscribe(String topic, IdempotentHandler handler) throws Exception;

  /** A running subscription. */
  interface Subscription extends AutoCloseable {

    /** Stops deliveries; idempotent. */
    @Override
    void close();
  }
}
