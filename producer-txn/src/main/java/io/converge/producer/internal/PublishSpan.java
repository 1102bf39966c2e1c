package io.converge.producer.internal;

import io.converge.core.tracing.MessageSpan;
import io.converge.core.tracing.Tracing;
import io.converge.producer.OutgoingMessage;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The PRODUCER span of one {@code publish} and the message it sends: the message with the span's W3C
 * {@code traceparent} (and {@code tracestate}) among its headers, the creation context that every backend stores with
 * it (half message, outbox row, Pulsar log row), so that a check-back commit, a re-send or a recovery continues the
 * original trace. The span is {@code "publish {topic}"}, or {@code "create {topic}"} on the outbox (the relay sends
 * later). Not thread-safe (one publish).
 */
final class PublishSpan implements AutoCloseable {

  private final MessageSpan span;
  private final OutgoingMessage message;

  private PublishSpan(MessageSpan span, OutgoingMessage message) {
    this.span = span;
    this.message = message;
  }

  /** Starts the span of publishing {@code message} on the backend {@code backend} ({@code BackendFactory#name}). */
  static PublishSpan start(Tracing tracing, String backend, OutgoingMessage message) {
    if (!tracing.enabled()) {
      return new PublishSpan(MessageSpan.NONE, message);
    }
    boolean outbox = backend.equals("outbox");
    String system = backend.equals("rocketmq") || backend.equals("pulsar") ? backend : null;
    Map<String, String> context = new LinkedHashMap<>();
    MessageSpan span = tracing.publish(system, outbox ? "create" : "publish", message.topic(), message.id(),
        context::put);
    span.attribute("converge.backend", backend);
    if (system != null && system.equals("rocketmq")) {
      span.attribute("messaging.rocketmq.message.type", "transaction");
    }
    return new PublishSpan(span, context.isEmpty() ? message : with(message, context));
  }

  /** The message to send: the one published, with the creation context when a span records. */
  OutgoingMessage message() {
    return message;
  }

  /** The publish failed: the span says so. */
  void failed(Throwable failure) {
    span.failed(failure);
  }

  @Override
  public void close() {
    span.close();
  }

  private static OutgoingMessage with(OutgoingMessage m, Map<String, String> context) {
    OutgoingMessage.Builder b = OutgoingMessage.builder(m.topic()).id(m.id()).key(m.key()).tag(m.tag())
        .tenant(m.tenant()).payload(m.payload());
    m.headers().forEach(b::header);
    context.forEach(b::header);
    return b.build();
  }
}
