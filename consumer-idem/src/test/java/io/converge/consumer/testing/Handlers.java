package io.converge.consumer.testing;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import java.util.Collection;
import java.util.function.Function;

/**
 * Wraps an {@link IdempotentHandler} for this module's tests, as {@code io.converge.testing.ConsumerBindingContract}
 * (converge-testing, a module above this one) does for the binding contract.
 */
public final class Handlers {

  private Handlers() {
  }

  /** {@code h} whose {@code handle} is {@code handle}; everything else is {@code h}'s. */
  public static IdempotentHandler around(IdempotentHandler h, Function<IncomingMessage, Outcome> handle) {
    return new IdempotentHandler() {

      @Override
      public Outcome handle(IncomingMessage message) {
        return handle.apply(message);
      }

      @Override
      public Outcome resume(long dlqId) {
        return h.resume(dlqId);
      }

      @Override
      public int releaseHeld(Collection<String> topics) {
        return h.releaseHeld(topics);
      }

      @Override
      public String group() {
        return h.group();
      }
    };
  }
}
