package io.converge.outbox.spi;

import java.util.Map;

/**
 * One outbox row as the relay hands it to a sink. Immutable apart from the payload array, which the
 * sink must not modify.
 *
 * @param seq the row's position in the outbox (insertion order)
 * @param messageId the message id (also in {@code headers})
 * @param topic the topic
 * @param key the message key (selects the queue), or null
 * @param tag the tag (RocketMQ sub-type), or null
 * @param headers the envelope and application headers, to send as message properties
 * @param payload the payload bytes
 * @param attempts how many sends of this row the broker refused so far
 */
public record OutboxRecord(
    long seq,
    String messageId,
    String topic,
    String key,
    String tag,
    Map<String, String> headers,
    byte[] payload,
    int attempts) {

  /**
   * The key that orders this record: its {@link #key()}, or its message id when it has none (then it is
   * ordered with nothing else). Records of one order key are sent in {@link #seq()} order.
   */
  public String orderKey() {
    return key != null ? key : messageId;
  }

  @Override
  public String toString() {
    return "OutboxRecord[seq=" + seq + ", id=" + messageId + ", topic=" + topic + ", key=" + key + "]";
  }
}
