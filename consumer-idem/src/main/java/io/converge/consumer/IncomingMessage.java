package io.converge.consumer;

import io.converge.core.Envelope;
import io.converge.core.internal.Require;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One delivery of a message as a consumer sees it, whatever the broker: the topic, the headers
 * (broker user properties, among them the {@link Envelope} headers), the payload and what the broker
 * knows about the delivery. Immutable and thread-safe; the payload is copied in and out.
 */
public final class IncomingMessage {

  private final String topic;
  private final Map<String, String> headers;
  private final byte[] payload;
  private final String brokerMessageId;
  private final String brokerKey;
  private final int deliveryCount;

  private IncomingMessage(Builder b) {
    this.topic = b.topic;
    this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
    this.payload = b.payload.clone();
    this.brokerMessageId = b.brokerMessageId;
    this.brokerKey = b.brokerKey;
    this.deliveryCount = b.deliveryCount;
  }

  /** A builder; {@code topic} and {@code payload} are required. */
  public static Builder builder() {
    return new Builder();
  }

  /** The topic the message was read from; never null. */
  public String topic() {
    return topic;
  }

  /** All headers, unmodifiable; never null. */
  public Map<String, String> headers() {
    return headers;
  }

  /** The value of header {@code name}, or null when absent. */
  public String header(String name) {
    return headers.get(name);
  }

  /** The Converge message id header ({@link Envelope#MESSAGE_ID}), or null when the producer set none. */
  public String envelopeMessageId() {
    return headers.get(Envelope.MESSAGE_ID);
  }

  /** The tenant header, or {@link Envelope#DEFAULT_TENANT} when absent or blank. */
  public String tenant() {
    String t = headers.get(Envelope.TENANT);
    return t == null || t.isBlank() ? Envelope.DEFAULT_TENANT : t;
  }

  /** A copy of the payload; never null (empty when the message has no body). */
  public byte[] payload() {
    return payload.clone();
  }

  /** The payload decoded as UTF-8. */
  public String payloadAsString() {
    return new String(payload, StandardCharsets.UTF_8);
  }

  /** The broker's own id of this stored message (RocketMQ msgId), or null. Not a dedup key by default. */
  public String brokerMessageId() {
    return brokerMessageId;
  }

  /** The broker's message key (RocketMQ keys), or null. */
  public String brokerKey() {
    return brokerKey;
  }

  /** 1 for the first delivery, 2 for the first redelivery, and so on; 1 when the broker does not say. */
  public int deliveryCount() {
    return deliveryCount;
  }

  @Override
  public String toString() {
    return "IncomingMessage[topic=" + topic + ", id=" + envelopeMessageId() + ", brokerId=" + brokerMessageId
        + ", key=" + brokerKey + ", delivery=" + deliveryCount + ", bytes=" + payload.length + "]";
  }

  /** Builds an {@link IncomingMessage}. Not thread-safe. */
  public static final class Builder {

    private String topic;
    private final Map<String, String> headers = new LinkedHashMap<>();
    private byte[] payload = new byte[0];
    private String brokerMessageId;
    private String brokerKey;
    private int deliveryCount = 1;

    private Builder() {
    }

    /** The topic; required. */
    public Builder topic(String topic) {
      this.topic = topic;
      return this;
    }

    /** Adds a header; a null value is ignored. */
    public Builder header(String name, String value) {
      if (value != null) {
        headers.put(Objects.requireNonNull(name, "header name"), value);
      }
      return this;
    }

    /** Adds every header of {@code all}; null values are ignored. */
    public Builder headers(Map<String, String> all) {
      all.forEach(this::header);
      return this;
    }

    /** The payload (copied); defaults to empty. */
    public Builder payload(byte[] payload) {
      this.payload = Objects.requireNonNull(payload, "payload").clone();
      return this;
    }

    /** The payload as UTF-8 text. */
    public Builder payload(String payload) {
      return payload(payload.getBytes(StandardCharsets.UTF_8));
    }

    /** The broker's id of the stored message. */
    public Builder brokerMessageId(String id) {
      this.brokerMessageId = id;
      return this;
    }

    /** The broker's message key. */
    public Builder brokerKey(String key) {
      this.brokerKey = key;
      return this;
    }

    /** The delivery count, at least 1; defaults to 1. */
    public Builder deliveryCount(int count) {
      Require.that(count >= 1, "deliveryCount", "be at least 1", count);
      this.deliveryCount = count;
      return this;
    }

    /** The message. @throws IllegalArgumentException when the topic is missing */
    public IncomingMessage build() {
      Require.that(topic != null && !topic.isBlank(), "topic", "not be blank", topic);
      return new IncomingMessage(this);
    }
  }
}
