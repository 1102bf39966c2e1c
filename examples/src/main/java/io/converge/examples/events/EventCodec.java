package io.converge.examples.events;

import io.converge.consumer.BusinessException;
import io.converge.consumer.IncomingMessage;
import io.converge.producer.OutgoingMessage;
import io.converge.saga.SagaCodec;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes events as JSON messages and reads them back. A payload that cannot be read is a
 * {@link BusinessException} with reason {@code undecodable-event}: retrying cannot fix it, so the
 * consumer records the outcome (and the message stays in the dedup table with its reason) instead of
 * looping. Thread-safe.
 */
public final class EventCodec {

  private final JsonMapper json = JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
      .build();

  /** A message to {@code topic} with key {@code key} whose payload is {@code event} as JSON. */
  public OutgoingMessage message(String topic, String key, Object event) {
    return OutgoingMessage.builder(topic).key(key).payload(bytes(event)).build();
  }

  /** The JSON bytes of {@code event}. */
  public byte[] bytes(Object event) {
    return json.writeValueAsBytes(event);
  }

  /**
   * Reads {@code message}'s payload as {@code type}.
   *
   * @throws BusinessException with reason {@code undecodable-event} when the payload is not a {@code type}
   */
  public <T> T read(IncomingMessage message, Class<T> type) {
    try {
      return json.readValue(message.payload(), type);
    } catch (JacksonException e) {
      throw new BusinessException("undecodable-event",
          "Message " + message.envelopeMessageId() + " on " + message.topic()
              + " is not a " + type.getSimpleName() + ": " + e.getOriginalMessage(),
          e);
    }
  }

  /** The saga data codec of {@code type}: its JSON (stored in {@code converge_saga.data}) and back. */
  public <T> SagaCodec<T> saga(Class<T> type) {
    return new SagaCodec<>() {

      @Override
      public String encode(T data) {
        return json.writeValueAsString(data);
      }

      @Override
      public T decode(String text) {
        return json.readValue(text, type);
      }
    };
  }
}
