package io.converge.core.rocketmq;

import java.util.List;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * One key, one queue: the queue at the key's hash modulo the queue count, so that the messages of one
 * key keep their order. The one rule of every Converge producer (half messages, the outbox sink, the
 * demo's injector) for a message with a key: a keyed message published by one and re-sent by another
 * lands on the same queue. A keyless half message is sent round-robin; the outbox sink and the
 * injector select a keyless message's queue by its id.
 * Converge-internal (see the package documentation). Stateless and thread-safe.
 */
public final class KeyQueueSelector implements MessageQueueSelector {

  /** The selector; its argument is the message's key (not null). */
  public static final KeyQueueSelector BY_KEY = new KeyQueueSelector();

  private KeyQueueSelector() {
  }

  /** The index of {@code key}'s queue among {@code queueCount} queues (at least 1). */
  public static int index(Object key, int queueCount) {
    return Math.floorMod(key.hashCode(), queueCount);
  }

  @Override
  public MessageQueue select(List<MessageQueue> queues, Message msg, Object key) {
    return queues.get(index(key, queues.size()));
  }
}
