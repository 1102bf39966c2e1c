package io.converge.producer.rocketmq;

import io.converge.core.rocketmq.KeyQueueSelector;
import io.converge.core.rocketmq.RocketMQMessages;
import io.converge.producer.OutgoingMessage;
import org.apache.rocketmq.common.message.Message;

/**
 * {@link OutgoingMessage} -&gt; RocketMQ message, on the shared mapping of {@link RocketMQMessages} (which
 * lives in converge-core and knows no producer type). Converge-internal (see the package documentation).
 * Stateless and thread-safe.
 */
public final class OutgoingMessages {

  private OutgoingMessages() {
  }

  /**
   * {@code m} as a RocketMQ message, its envelope stamped with {@code producer} and {@code nowMillis}.
   *
   * @see OutgoingMessage#envelope(String, long)
   */
  public static Message toMessage(OutgoingMessage m, String producer, long nowMillis) {
    return RocketMQMessages.toMessage(m.topic(), m.tag(), keys(m), m.payload(), m.envelope(producer, nowMillis));
  }

  /** The KEYS of {@code m}, and the argument of {@link KeyQueueSelector}: its key, else its id. */
  public static String keys(OutgoingMessage m) {
    return m.key() != null ? m.key() : m.id();
  }
}
