package io.converge.consumer.internal;

import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageIdResolver;
import io.converge.consumer.MissingMessageIdException;
import java.util.Optional;
import java.util.regex.Pattern;

/** The dedup id of an incoming message, by the configured resolver, checked to be a usable key. */
final class ResolvedId {

  // printable ASCII without spaces, as every Converge id (UUIDv7) and any sane business id is
  private static final Pattern VALID_ID = Pattern.compile("[\\x21-\\x7e]{1,200}");

  private ResolvedId() {
  }

  /**
   * The id of {@code message}.
   *
   * @throws MissingMessageIdException when the resolver fails or finds none, or the id is unusable
   */
  static String of(MessageIdResolver idResolver, IncomingMessage message) {
    Optional<String> id;
    try {
      id = idResolver.resolve(message);
    } catch (RuntimeException e) {
      throw new MissingMessageIdException(message.topic(), message.brokerMessageId(), "the id resolver failed: " + e);
    }
    if (id.isEmpty()) {
      throw new MissingMessageIdException(message.topic(), message.brokerMessageId(),
          "no header " + io.converge.producer.Envelope.MESSAGE_ID + " and no configured fallback found one");
    }
    if (!VALID_ID.matcher(id.get()).matches()) {
      throw new MissingMessageIdException(message.topic(), message.brokerMessageId(),
          "the id must be 1..200 printable ASCII characters without spaces, but was '"
              + FailureRecorder.abbreviate(id.get(), 80) + "'");
    }
    return id.get();
  }
}
