package io.converge.consumer.internal;

import io.converge.core.internal.Text;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageIdResolver;
import io.converge.consumer.MissingMessageIdException;
import java.util.Optional;

/** The dedup id of an incoming message, by the configured resolver, checked to be a usable key. */
final class ResolvedId {

  private static final int MAX_LENGTH = 200;

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
          "no header " + io.converge.core.Envelope.MESSAGE_ID + " and no configured fallback found one");
    }
    if (!usable(id.get())) {
      throw new MissingMessageIdException(message.topic(), message.brokerMessageId(),
          "the id must be 1..200 printable ASCII characters without spaces, but was '"
              + Text.printable(id.get(), 80) + "'");
    }
    return id.get();
  }

  /** The id of {@code message}, or null when it has no usable one. */
  static String orNull(MessageIdResolver idResolver, IncomingMessage message) {
    try {
      return of(idResolver, message);
    } catch (MissingMessageIdException e) {
      return null;
    }
  }

  /**
   * 1..200 printable ASCII characters without spaces, as every Converge id (UUIDv7) and any sane business id
   * is. A loop rather than a regular expression: this runs for every message.
   */
  static boolean usable(String id) {
    int n = id.length();
    if (n == 0 || n > MAX_LENGTH) {
      return false;
    }
    for (int i = 0; i < n; i++) {
      char ch = id.charAt(i);
      if (ch < 0x21 || ch > 0x7e) {
        return false;
      }
    }
    return true;
  }
}
