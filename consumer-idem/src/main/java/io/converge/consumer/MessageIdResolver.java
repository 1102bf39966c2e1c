package io.converge.consumer;

import io.converge.consumer.internal.JsonFields;
import io.converge.core.Envelope;
import java.util.Objects;
import java.util.Optional;

/**
 * Finds the id under which a message is deduplicated. The default reads the Converge header
 * {@link Envelope#MESSAGE_ID} and nothing else; messages from producers that are not Converge's can
 * be given a fallback with {@link #orElse}. A resolver never invents an id: an empty result sends
 * the message to the dead-letter table. Implementations are thread-safe and must not throw.
 */
@FunctionalInterface
public interface MessageIdResolver {

  /** The id of {@code message}, or empty when this resolver finds none. */
  Optional<String> resolve(IncomingMessage message);

  /** This resolver, then {@code fallback} when this one finds nothing. */
  default MessageIdResolver orElse(MessageIdResolver fallback) {
    Objects.requireNonNull(fallback, "fallback");
    return m -> {
      Optional<String> id = resolve(m);
      return id.isPresent() ? id : fallback.resolve(m);
    };
  }

  /** The Converge envelope header {@value Envelope#MESSAGE_ID}; the default. */
  static MessageIdResolver envelope() {
    return header(Envelope.MESSAGE_ID);
  }

  /** A header (broker user property) named {@code name}. */
  static MessageIdResolver header(String name) {
    Objects.requireNonNull(name, "name");
    return m -> nonBlank(m.header(name));
  }

  /**
   * The broker's message key (RocketMQ {@code keys}). Use it only when the producer sets a key that
   * is unique per message (e.g. a business event id), never an aggregate id.
   */
  static MessageIdResolver brokerKey() {
    return m -> nonBlank(m.brokerKey());
  }

  /**
   * A top-level string or integer field of a JSON object payload (e.g. {@code "eventId"}). A payload
   * that is not a JSON object, or lacks the field, yields empty.
   */
  static MessageIdResolver payloadField(String field) {
    Objects.requireNonNull(field, "field");
    return m -> nonBlank(JsonFields.topLevel(m.payloadAsString(), field));
  }

  private static Optional<String> nonBlank(String s) {
    return s == null || s.isBlank() ? Optional.empty() : Optional.of(s.strip());
  }
}
