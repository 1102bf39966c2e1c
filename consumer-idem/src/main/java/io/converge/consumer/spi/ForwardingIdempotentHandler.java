package io.converge.consumer.spi;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import java.util.Collection;
import java.util.Objects;
import java.util.function.Function;

/**
 * An {@link IdempotentHandler} that hands every call to another: the base of a decorator that wraps a handler's
 * deliveries (a span around them, a meter or a signal after them) and overrides {@link #handle} only, so that
 * {@link #resume}, {@link #releaseHeld} and {@link #group} are never forgotten. Thread-safe when the delegate is.
 */
public abstract class ForwardingIdempotentHandler implements IdempotentHandler {

  private final IdempotentHandler delegate;

  /** A handler forwarding to {@code delegate}. */
  protected ForwardingIdempotentHandler(IdempotentHandler delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /**
   * {@code delegate} whose deliveries go to {@code handle} instead; {@link #resume}, {@link #releaseHeld} and
   * {@link #group} stay the delegate's.
   */
  public static IdempotentHandler around(IdempotentHandler delegate, Function<IncomingMessage, Outcome> handle) {
    Objects.requireNonNull(handle, "handle");
    return new ForwardingIdempotentHandler(delegate) {

      @Override
      public Outcome handle(IncomingMessage message) {
        return handle.apply(message);
      }
    };
  }

  /** The handler every call goes to. */
  protected final IdempotentHandler delegate() {
    return delegate;
  }

  @Override
  public Outcome handle(IncomingMessage message) {
    return delegate.handle(message);
  }

  @Override
  public Outcome resume(long dlqId) {
    return delegate.resume(dlqId);
  }

  @Override
  public int releaseHeld(Collection<String> topics) {
    return delegate.releaseHeld(topics);
  }

  @Override
  public String group() {
    return delegate.group();
  }
}
