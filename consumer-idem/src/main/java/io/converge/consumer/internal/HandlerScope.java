package io.converge.consumer.internal;

import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import java.sql.Connection;

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

  /**
   * Runs {@code handler} on {@code message} with the scope of its message open (scopes nest); {@code messageId} is
   * the id the caller already resolved for the claim.
   */
  static void run(String group, String messageId, MessageHandler handler, Connection connection,
      IncomingMessage message) throws Exception {
    Current outer = CURRENT.get();
    CURRENT.set(new Current(group, messageId, message.tenant(), message.topic()));
    try {
      handler.handle(connection, message);
    } finally {
      if (outer == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(outer);
      }
    }
  }
}
