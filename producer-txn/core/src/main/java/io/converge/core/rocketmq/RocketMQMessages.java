package io.converge.core.rocketmq;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;

/**
 * Message &lt;-&gt; envelope: the one mapping between Converge's envelope and a RocketMQ message. The
 * envelope's headers (message id, key, tenant, producer, creation time, traceparent, see
 * {@link io.converge.core.Envelope}) travel as user properties; the key, or the message id for a
 * message without key, is the message's KEYS; the payload is the body. A producer's
 * {@code OutgoingMessage} maps through {@code io.converge.producer.rocketmq.OutgoingMessages}. Converge-internal
 * (see the package documentation). Stateless and thread-safe.
 */
public final class RocketMQMessages {

  private RocketMQMessages() {
  }

  /**
   * A RocketMQ message carrying {@code headers} (an envelope already stamped) as user properties.
   *
   * @param tag may be null
   * @param keys the message's KEYS (its key, else its id); not null
   */
  public static Message toMessage(String topic, String tag, String keys, byte[] body, Map<String, String> headers) {
    Message msg = new Message(topic, tag, keys, body);
    for (Map.Entry<String, String> h : headers.entrySet()) {
      msg.putUserProperty(h.getKey(), h.getValue());
    }
    return msg;
  }

  /** The user properties of {@code msg}: the envelope and foreign headers, without RocketMQ's own (KEYS, TAGS, ...). */
  public static Map<String, String> userProperties(Message msg) {
    Map<String, String> out = new LinkedHashMap<>();
    if (msg.getProperties() != null) {
      msg.getProperties().forEach((k, v) -> {
        if (!MessageConst.STRING_HASH_SET.contains(k)) {
          out.put(k, v);
        }
      });
    }
    return out;
  }

  /** The body of {@code msg}; an empty array when it has none. */
  public static byte[] body(Message msg) {
    return msg.getBody() == null ? new byte[0] : msg.getBody();
  }
}
