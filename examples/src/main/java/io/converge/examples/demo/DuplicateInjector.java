package io.converge.examples.demo;

import io.converge.producer.OutgoingMessage;

/**
 * Sends a message again, straight through the broker's own client and bypassing Converge, with the
 * message id of the original: what a broker's redelivery or a producer's blind retry looks like to
 * a consumer. Implementations: {@link RocketMQInjector}, {@link PulsarInjector}.
 */
public interface DuplicateInjector extends AutoCloseable {

  /** Sends {@code m} (its id, key, envelope and payload) once more. */
  void send(OutgoingMessage m) throws Exception;

  @Override
  void close();
}
