package io.converge.consumer.internal;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.spi.ForwardingIdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.core.tracing.MessageSpan;
import io.converge.core.tracing.Tracing;
import java.util.Locale;

/**
 * An {@link IdempotentHandler} whose every {@link #handle} runs in a CONSUMER span {@code "process {topic}"}, current
 * for the whole delivery (the claim, the handler, its database transaction and the messages it publishes), linked to
 * the message's creation context ({@code traceparent}) or, with {@code asParent}, a child of it. The span carries the
 * group, the message id and the outcome ({@code converge.outcome}). Thread-safe, as the handler it wraps.
 */
public final class TracedHandler extends ForwardingIdempotentHandler {

  private final Tracing tracing;
  private final boolean asParent;

  private TracedHandler(IdempotentHandler handler, Tracing tracing, boolean asParent) {
    super(handler);
    this.tracing = tracing;
    this.asParent = asParent;
  }

  /** {@code handler} traced by {@code tracing}; {@code handler} itself when {@code tracing} is disabled. */
  public static IdempotentHandler wrap(IdempotentHandler handler, Tracing tracing, boolean asParent) {
    return tracing.enabled() ? new TracedHandler(handler, tracing, asParent) : handler;
  }

  @Override
  public Outcome handle(IncomingMessage message) {
    // the binding is not known here: messaging.system is left to the broker client's own instrumentation
    MessageSpan span = tracing.process(null, message.topic(), message.envelopeMessageId(), group(),
        message.headers(), asParent);
    try {
      Outcome outcome = delegate().handle(message);
      span.attribute("converge.outcome", outcome.name().toLowerCase(Locale.ROOT));
      return outcome;
    } catch (RuntimeException | Error e) {
      span.failed(e);
      throw e;
    } finally {
      span.close();
    }
  }
}
