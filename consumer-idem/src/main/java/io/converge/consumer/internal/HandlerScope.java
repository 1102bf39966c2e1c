package io.converge.consumer.internal;

import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import io.converge.consumer.MessageIdResolver;

/**
 * The message an idempotent handler is running for, on the handler's thread: what a {@code StateMachine}
 * transition inside the handler records as its cause and message id. Not for users; the scope is opened and
 * closed around each run of the user's {@link MessageHandler} by {@link IdempotentHandlerImpl}.
 */
public final class HandlerScope {

  /** The consumer group, message id and tenant of the running handler. */
  public record Current(String group, String messageId, String tenant, String topic) {
  }

  private static final ThreadLocal<Current> CURRENT = new ThreadLocal<>();

  private HandlerScope() {
  }

  /** The handler run on the current thread, or null outside an idempotent handler. */
  public static Current current() {
    return CURRENT.get();
  }

  /** {@code handler}, opening the scope of its message around each run (scopes nest). */
  static MessageHandler wrap(String group, MessageHandler handler, MessageIdResolver idResolver) {
    return (connection, message) -> {
      Current outer = CURRENT.get();
      CURRENT.set(new Current(group, id(idResolver, message), message.tenant(), message.topic()));
      try {
        handler.handle(connection, message);
      } finally {
        if (outer == null) {
          CURRENT.remove();
        } else {
          CURRENT.set(outer);
        }
      }
    };
  }

  private static String id(MessageIdResolver idResolver, IncomingMessage message) {
    try {
      return ResolvedId.of(idResolver, message);
    } catch (RuntimeException e) {
      return message.envelopeMessageId(); // never reached: the handler runs only for a resolved id
    }
  }
}
