package io.converge.core.tracing.internal;

import io.converge.core.Envelope;
import io.converge.core.tracing.MessageSpan;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The spans of {@link SpanFactory} made with OpenTelemetry, propagated in the W3C format whatever propagators the
 * instance has (the envelope's {@code traceparent} is W3C). The only class of Converge that refers to OpenTelemetry:
 * loaded only when its API is on the classpath. Thread-safe.
 */
public final class OtelSpans implements SpanFactory {

  private static final Logger LOG = LoggerFactory.getLogger(OtelSpans.class);
  /** The instrumentation scope of every span Converge starts. */
  public static final String SCOPE = "io.converge";

  private static final TextMapGetter<Map<String, String>> GETTER = new TextMapGetter<>() {

    @Override
    public Iterable<String> keys(Map<String, String> carrier) {
      return carrier.keySet();
    }

    @Override
    public String get(Map<String, String> carrier, String key) {
      return carrier == null ? null : carrier.get(key);
    }
  };

  private final Supplier<Tracer> tracer;

  private OtelSpans(Supplier<Tracer> tracer) {
    this.tracer = tracer;
  }

  /** Spans of {@code openTelemetry}. */
  public static SpanFactory of(OpenTelemetry openTelemetry) {
    Tracer t = openTelemetry.getTracer(SCOPE);
    return new OtelSpans(() -> t);
  }

  /** Spans of {@link GlobalOpenTelemetry}, looked up at each span (so an instance registered later is used). */
  public static SpanFactory global() {
    return new OtelSpans(() -> GlobalOpenTelemetry.getTracer(SCOPE));
  }

  /** Sets {@code name} on the current span, if one is recording. */
  public static void annotateCurrent(String name, String value) {
    Span span = Span.current();
    if (value != null && span.isRecording()) {
      span.setAttribute(name, value);
    }
  }

  @Override
  public MessageSpan publish(String system, String operation, String topic, String messageId,
      BiConsumer<String, String> headers) {
    Span span = start(operation, topic, SpanKind.PRODUCER, system, messageId, Context.current())
        .setAttribute("messaging.operation.type", operation.equals("create") ? "create" : "send")
        .startSpan();
    W3CTraceContextPropagator.getInstance().inject(Context.current().with(span), headers,
        (carrier, key, value) -> carrier.accept(key, value));
    return new OtelMessageSpan(span, null);
  }

  @Override
  public MessageSpan send(String system, String topic, String messageId, Map<String, String> headers) {
    SpanBuilder b = start("send", topic, SpanKind.PRODUCER, system, messageId, Context.current())
        .setAttribute("messaging.operation.type", "send");
    SpanContext creation = creation(headers, "message " + messageId);
    if (creation != null) {
      b.addLink(creation);
    }
    return new OtelMessageSpan(b.startSpan(), null);
  }

  @Override
  public MessageSpan process(String system, String topic, String messageId, String group, Map<String, String> headers,
      boolean asParent) {
    SpanContext creation = creation(headers, "message " + messageId);
    Context parent = asParent && creation != null ? Context.current().with(Span.wrap(creation)) : Context.current();
    SpanBuilder b = start("process", topic, SpanKind.CONSUMER, system, messageId, parent)
        .setAttribute("messaging.operation.type", "process");
    if (group != null) {
      b.setAttribute("messaging.consumer.group.name", group);
    }
    if (creation != null && !asParent) {
      b.addLink(creation);
    }
    Span span = b.startSpan();
    return new OtelMessageSpan(span, span.makeCurrent());
  }

  @Override
  public MessageSpan span(String name, Kind kind, Map<String, String> parent, BiConsumer<String, String> headers) {
    SpanContext stored = creation(parent, "span '" + name + "'");
    Context context = stored != null ? Context.current().with(Span.wrap(stored)) : Context.current();
    Span span = tracer.get().spanBuilder(name).setParent(context).setSpanKind(switch (kind) {
      case INTERNAL -> SpanKind.INTERNAL;
      case CLIENT -> SpanKind.CLIENT;
      case SERVER -> SpanKind.SERVER;
    }).startSpan();
    Context current = context.with(span);
    if (headers != null) {
      W3CTraceContextPropagator.getInstance().inject(current, headers,
          (carrier, key, value) -> carrier.accept(key, value));
    }
    return new OtelMessageSpan(span, current.makeCurrent());
  }

  private SpanBuilder start(String operation, String topic, SpanKind kind, String system, String messageId,
      Context parent) {
    SpanBuilder b = tracer.get().spanBuilder(operation + " " + topic).setSpanKind(kind).setParent(parent)
        .setAttribute("messaging.operation.name", operation)
        .setAttribute("messaging.destination.name", topic);
    if (system != null) {
      b.setAttribute("messaging.system", system);
    }
    if (messageId != null) {
      b.setAttribute("messaging.message.id", messageId);
    }
    return b;
  }

  /**
   * The creation context in {@code headers}: null when there is none, or when the {@code traceparent} is malformed
   * (ignored, with a debug line: the spans start a new trace; never a failure).
   */
  static SpanContext creation(Map<String, String> headers, String what) {
    String header = headers == null ? null : headers.get(Envelope.TRACEPARENT);
    if (header == null) {
      return null;
    }
    if (TraceParent.parse(header) == null) {
      LOG.debug("Ignoring the malformed traceparent '{}' of {}: its spans start a new trace",
          header.length() > 100 ? header.substring(0, 100) + "..." : header, what);
      return null;
    }
    SpanContext context = Span.fromContext(W3CTraceContextPropagator.getInstance().extract(Context.root(), headers,
        GETTER)).getSpanContext();
    return context.isValid() ? context : null;
  }

  /** A started span, and the scope that made it current (processing spans only). */
  private static final class OtelMessageSpan implements MessageSpan {

    private final Span span;
    private final Scope scope;
    private boolean closed;

    OtelMessageSpan(Span span, Scope scope) {
      this.span = span;
      this.scope = scope;
    }

    @Override
    public MessageSpan attribute(String name, String value) {
      if (value != null) {
        span.setAttribute(name, value);
      }
      return this;
    }

    @Override
    public void failed(Throwable failure) {
      span.recordException(failure);
      span.setStatus(StatusCode.ERROR, failure.toString());
    }

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      if (scope != null) {
        scope.close();
      }
      span.end();
    }
  }
}
