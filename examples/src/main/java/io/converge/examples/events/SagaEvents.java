package io.converge.examples.events;

import io.converge.consumer.IncomingMessage;
import io.converge.producer.spring.TransactionalPublisher;

/**
 * How a saga step reads the event it handles and publishes the next one: the event as JSON ({@link EventCodec}), on
 * the full name of a base topic ({@link Topics}), keyed by the order, through the {@link TransactionalPublisher} so that
 * it is sent if and only if the handler's transaction commits. A bean of the services that publish (register it with
 * {@code @Import(SagaEvents.class)}). Thread-safe.
 *
 * @param publisher publishes in the current transaction
 * @param codec writes and reads the events
 * @param topics the run's topic names
 */
public record SagaEvents(TransactionalPublisher publisher, EventCodec codec, Topics topics) {

  /**
   * Reads {@code message}'s payload as {@code type}.
   *
   * @throws io.converge.consumer.BusinessException with reason {@code undecodable-event} when it is not a {@code type}
   */
  public <T> T read(IncomingMessage message, Class<T> type) {
    return codec.read(message, type);
  }

  /** Publishes {@code event} of order {@code orderId} on the topic with base name {@code baseTopic}, in this transaction. */
  public void publish(String baseTopic, String orderId, Object event) {
    publisher.publish(codec.message(topics.of(baseTopic), orderId, event));
  }
}
