package io.converge.core.tracing;

import io.converge.core.tracing.internal.OtelSpans;
import io.converge.core.tracing.internal.SpanFactory;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * Where Converge's spans go: an OpenTelemetry instance ({@link OpenTelemetryTracing#of}), the global one ({@link #global()}, the default
 * of every builder) or nowhere ({@link #none()}). The OpenTelemetry API ({@code io.opentelemetry:opentelemetry-api})
 * is an optional dependency: without it {@link #global()} is {@link #none()}, nothing is traced and no OpenTelemetry
 * class is loaded (no signature of this class names one, so that reflection on it works without the API too).
 * Immutable and thread-safe.
 *
 * <p>The methods that start spans are for Converge's modules (the producer, the relays, the consumer); applications
 * only choose an instance. Spans follow the OpenTelemetry messaging semantic conventions (names
 * {@code "{operation} {topic}"}, attributes {@code messaging.*}); the context travels in the envelope's W3C
 * {@code traceparent} and {@code tracestate} headers. A malformed {@code traceparent} is ignored (a debug log line;
 * the spans start a new trace): it never fails a message.
 */
public final class Tracing {

  private static final boolean API_PRESENT = present("io.opentelemetry.api.GlobalOpenTelemetry");
  private static final Tracing NONE = new Tracing(null);

  private final SpanFactory spans;

  private Tracing(SpanFactory spans) {
    this.spans = spans;
  }

  /** Traces nothing. */
  public static Tracing none() {
    return NONE;
  }

  /**
   * Traces with {@code GlobalOpenTelemetry}, looked up at each span, when the OpenTelemetry API is on the classpath;
   * else {@link #none()}. The default of every Converge builder. Register your SDK as the global instance before the
   * first message (the OpenTelemetry agent and the SDK's autoconfiguration do): OpenTelemetry fixes the global
   * instance at its first use, to a no-op one when none is registered yet.
   */
  public static Tracing global() {
    return API_PRESENT ? new Tracing(OtelSpans.global()) : NONE;
  }

  /** Tracing by {@code spans}; see {@link OpenTelemetryTracing#of}, which keeps OpenTelemetry's types out of here. */
  static Tracing with(SpanFactory spans) {
    return new Tracing(Objects.requireNonNull(spans, "spans"));
  }

  /** False for {@link #none()}. */
  public boolean enabled() {
    return spans != null;
  }

  /**
   * Starts a PRODUCER span {@code "{operation} {topic}"} under the current context (operation {@code publish}, or
   * {@code create} when the message is sent later by a relay) and writes its context, the message's creation
   * context, to {@code headers} ({@code traceparent}, and {@code tracestate} when there is one).
   *
   * @param system the {@code messaging.system} ({@code rocketmq}, {@code pulsar}), or null when not known yet
   */
  public MessageSpan publish(String system, String operation, String topic, String messageId,
      BiConsumer<String, String> headers) {
    return spans == null ? MessageSpan.NONE : spans.publish(system, operation, topic, messageId, headers);
  }

  /**
   * Starts a PRODUCER span {@code "send {topic}"} under the current context, linked to the creation context that
   * {@code headers} carry (the relay's send of a stored message, a recovery's re-publish).
   */
  public MessageSpan send(String system, String topic, String messageId, Map<String, String> headers) {
    return spans == null ? MessageSpan.NONE : spans.send(system, topic, messageId, headers);
  }

  /**
   * Starts a CONSUMER span {@code "process {topic}"} and makes it current until it is closed (so that the
   * handler's spans and the messages it publishes are part of its trace). It is linked to the creation context
   * that {@code headers} carry, or, with {@code asParent}, a child of it.
   */
  public MessageSpan process(String system, String topic, String messageId, String group, Map<String, String> headers,
      boolean asParent) {
    return spans == null ? MessageSpan.NONE : spans.process(system, topic, messageId, group, headers, asParent);
  }

  /**
   * Starts an INTERNAL span {@code name} whose parent is the context {@code parent} carries ({@code traceparent},
   * {@code tracestate}: a context stored with a long-running piece of work, such as a saga's row, so that whatever
   * resumes it continues its trace), or the current context when {@code parent} is null or carries none or a
   * malformed one (ignored: never a failure). The span is current until it is closed; its context is written to
   * {@code headers} when not null.
   */
  public MessageSpan internal(String name, Map<String, String> parent, BiConsumer<String, String> headers) {
    return spans == null ? MessageSpan.NONE : spans.span(name, SpanFactory.Kind.INTERNAL, parent, headers);
  }

  /**
   * As {@link #internal}, a CLIENT span: an outgoing call, whose request carries the {@code traceparent} (and
   * {@code tracestate}) written to {@code headers}.
   */
  public MessageSpan client(String name, Map<String, String> parent, BiConsumer<String, String> headers) {
    return spans == null ? MessageSpan.NONE : spans.span(name, SpanFactory.Kind.CLIENT, parent, headers);
  }

  /**
   * As {@link #internal}, a SERVER span: an incoming call, {@code parent} the request's {@code traceparent} and
   * {@code tracestate} headers.
   */
  public MessageSpan server(String name, Map<String, String> parent) {
    return spans == null ? MessageSpan.NONE : spans.span(name, SpanFactory.Kind.SERVER, parent, null);
  }

  /**
   * Sets the attribute {@code name} on the current span (e.g. the server span of an HTTP request), whatever
   * instance started it; nothing without the OpenTelemetry API, without a current span, or with a null value.
   */
  public static void annotateCurrent(String name, String value) {
    if (API_PRESENT) {
      OtelSpans.annotateCurrent(name, value);
    }
  }

  private static boolean present(String className) {
    try {
      Class.forName(className, false, Tracing.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
