package io.converge.core.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The spans and the propagation of {@link Tracing}, with the SDK's in-memory exporter. */
class TracingTest {

  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final SdkTracerProvider provider = SdkTracerProvider.builder()
      .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
  private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(provider).build();
  private final Tracing tracing = OpenTelemetryTracing.of(sdk);

  @AfterEach
  void close() {
    sdk.close();
  }

  @Test
  void publishStartsAProducerSpanUnderTheCurrentOneAndWritesItsTraceparent() {
    Map<String, String> headers = new LinkedHashMap<>();
    Span request = sdk.getTracer("test").spanBuilder("POST /orders").startSpan();
    try (Scope ignored = request.makeCurrent()) {
      tracing.publish("rocketmq", "publish", "orders", "m-1", headers::put)
          .attribute("messaging.rocketmq.message.type", "transaction").close();
    } finally {
      request.end();
    }
    SpanData publish = span("publish orders");
    assertThat(publish.getKind()).isEqualTo(SpanKind.PRODUCER);
    assertThat(publish.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
    assertThat(publish.getTraceId()).isEqualTo(request.getSpanContext().getTraceId());
    assertThat(headers).containsEntry("traceparent",
        "00-" + publish.getTraceId() + "-" + publish.getSpanId() + "-01");
    assertThat(publish.getAttributes().get(AttributeKey.stringKey("messaging.system"))).isEqualTo("rocketmq");
    assertThat(publish.getAttributes().get(AttributeKey.stringKey("messaging.destination.name"))).isEqualTo("orders");
    assertThat(publish.getAttributes().get(AttributeKey.stringKey("messaging.message.id"))).isEqualTo("m-1");
    assertThat(publish.getAttributes().get(AttributeKey.stringKey("messaging.operation.type"))).isEqualTo("send");
    assertThat(publish.getAttributes().get(AttributeKey.stringKey("messaging.rocketmq.message.type")))
        .isEqualTo("transaction");
  }

  @Test
  void processIsLinkedToTheCreationContextByDefaultAndTheHandlersWorkIsUnderIt() {
    Map<String, String> headers = created();
    SpanData publish = span("publish orders");
    try (MessageSpan process = tracing.process("pulsar", "orders", "m-1", "billing", headers, false)) {
      sdk.getTracer("test").spanBuilder("INSERT ledger").startSpan().end(); // the handler's work
    }
    SpanData process = span("process orders");
    assertThat(process.getKind()).isEqualTo(SpanKind.CONSUMER);
    assertThat(process.getTraceId()).isNotEqualTo(publish.getTraceId());
    assertThat(process.getLinks()).singleElement().satisfies(l -> {
      assertThat(l.getSpanContext().getTraceId()).isEqualTo(publish.getTraceId());
      assertThat(l.getSpanContext().getSpanId()).isEqualTo(publish.getSpanId());
    });
    assertThat(process.getAttributes().get(AttributeKey.stringKey("messaging.consumer.group.name")))
        .isEqualTo("billing");
    assertThat(span("INSERT ledger").getParentSpanId()).isEqualTo(process.getSpanId());
    assertThat(Span.current().getSpanContext().isValid()).isFalse(); // the scope was closed
  }

  @Test
  void processAsParentContinuesTheCreationTrace() {
    Map<String, String> headers = created();
    SpanData publish = span("publish orders");
    tracing.process("pulsar", "orders", "m-1", "billing", headers, true).close();
    SpanData process = span("process orders");
    assertThat(process.getTraceId()).isEqualTo(publish.getTraceId());
    assertThat(process.getParentSpanId()).isEqualTo(publish.getSpanId());
    assertThat(process.getLinks()).isEmpty();
  }

  @Test
  void sendIsLinkedToTheCreationContext() {
    Map<String, String> headers = created();
    SpanData publish = span("publish orders");
    tracing.send("rocketmq", "orders", "m-1", headers).close();
    SpanData send = span("send orders");
    assertThat(send.getKind()).isEqualTo(SpanKind.PRODUCER);
    assertThat(send.getLinks()).singleElement()
        .satisfies(l -> assertThat(l.getSpanContext().getSpanId()).isEqualTo(publish.getSpanId()));
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0", // bad length
      "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", // bad hex
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // version ff
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01", // all-zero trace id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // all-zero span id
  })
  void aMalformedTraceparentIsIgnoredAndANewTraceStarts(String malformed) {
    Map<String, String> headers = Map.of("traceparent", malformed);
    assertThatCode(() -> {
      tracing.process("rocketmq", "orders", "m-1", "billing", headers, true).close();
      tracing.process("rocketmq", "orders", "m-2", "billing", headers, false).close();
      tracing.send("rocketmq", "orders", "m-3", headers).close();
    }).doesNotThrowAnyException();
    for (SpanData s : exporter.getFinishedSpanItems()) {
      assertThat(s.getParentSpanContext().isValid()).as(s.getName()).isFalse();
      assertThat(s.getLinks()).as(s.getName()).isEmpty();
      assertThat(s.getTraceId()).isNotEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    }
    assertThat(exporter.getFinishedSpanItems()).hasSize(3);
  }

  @Test
  void anInternalSpanContinuesAStoredContextOrElseTheCurrentOneAndWritesItsOwn() {
    Map<String, String> stored = created(); // e.g. a saga's row
    SpanData publish = span("publish orders");
    Map<String, String> own = new LinkedHashMap<>();
    Span unrelated = sdk.getTracer("test").spanBuilder("poll").startSpan();
    try (Scope ignored = unrelated.makeCurrent()) {
      try (MessageSpan step = tracing.internal("saga step reserve", stored, own::put)) {
        step.attribute("converge.saga.id", "s-1");
        tracing.publish("rocketmq", "publish", "inventory", "m-2", (k, v) -> {
        }).close(); // the work under it
      }
      tracing.internal("saga step debit", Map.of("traceparent", "garbage"), null).close();
      tracing.client("saga step cancel", null, own::put).close();
    } finally {
      unrelated.end();
    }
    SpanData step = span("saga step reserve");
    assertThat(step.getKind()).isEqualTo(SpanKind.INTERNAL);
    assertThat(step.getTraceId()).isEqualTo(publish.getTraceId());
    assertThat(step.getParentSpanId()).isEqualTo(publish.getSpanId());
    assertThat(step.getAttributes().get(AttributeKey.stringKey("converge.saga.id"))).isEqualTo("s-1");
    assertThat(span("publish inventory").getParentSpanId()).as("current while open").isEqualTo(step.getSpanId());
    // a malformed stored context is ignored: the current one is the parent
    assertThat(span("saga step debit").getParentSpanId()).isEqualTo(unrelated.getSpanContext().getSpanId());
    SpanData client = span("saga step cancel");
    assertThat(client.getKind()).isEqualTo(SpanKind.CLIENT);
    assertThat(own).containsEntry("traceparent", "00-" + client.getTraceId() + "-" + client.getSpanId() + "-01");
    tracing.server("tcc try b1", own).close();
    assertThat(span("tcc try b1").getParentSpanId()).isEqualTo(client.getSpanId());
    assertThat(span("tcc try b1").getKind()).isEqualTo(SpanKind.SERVER);
  }

  @Test
  void annotateCurrentSetsAnAttributeOfTheCurrentSpan() {
    Span server = sdk.getTracer("test").spanBuilder("POST /orders").setSpanKind(SpanKind.SERVER).startSpan();
    try (Scope ignored = server.makeCurrent()) {
      Tracing.annotateCurrent("converge.idempotency.outcome", "replay");
    } finally {
      server.end();
    }
    assertThat(span("POST /orders").getAttributes()
        .get(AttributeKey.stringKey("converge.idempotency.outcome"))).isEqualTo("replay");
  }

  @Test
  void noneTracesNothing() {
    Map<String, String> headers = new LinkedHashMap<>();
    Tracing.none().publish("rocketmq", "publish", "orders", "m-1", headers::put).close();
    assertThat(headers).isEmpty();
    assertThat(Tracing.none().enabled()).isFalse();
  }

  /**
   * Without the OpenTelemetry API on the classpath: {@link Tracing#global()} is none, its spans do nothing, and no
   * OpenTelemetry class is loaded (else this would throw {@code NoClassDefFoundError}).
   */
  @Test
  void withoutTheApiNothingHappensAndNoOpenTelemetryClassIsLoaded() throws Exception {
    URL core = Tracing.class.getProtectionDomain().getCodeSource().getLocation();
    try (URLClassLoader loader = new URLClassLoader(new URL[]{core}, ClassLoader.getPlatformClassLoader())) {
      assertThatCode(() -> Class.forName("io.opentelemetry.api.OpenTelemetry", false, loader))
          .isInstanceOf(ClassNotFoundException.class);
      Class<?> tracingClass = Class.forName(Tracing.class.getName(), true, loader);
      Object global = tracingClass.getMethod("global").invoke(null);
      assertThat(tracingClass.getMethod("enabled").invoke(global)).isEqualTo(false);
      Object span = tracingClass.getMethod("process", String.class, String.class, String.class, String.class,
          Map.class, boolean.class).invoke(global, "rocketmq", "orders", "m-1", "g", Map.of("traceparent", "x"), false);
      Class.forName(MessageSpan.class.getName(), false, loader).getMethod("close").invoke(span);
      Object step = tracingClass.getMethod("internal", String.class, Map.class, java.util.function.BiConsumer.class)
          .invoke(global, "saga step reserve", Map.of("traceparent", "x"), null);
      Class.forName(MessageSpan.class.getName(), false, loader).getMethod("close").invoke(step);
      tracingClass.getMethod("annotateCurrent", String.class, String.class).invoke(null, "a", "b");
    }
  }

  private Map<String, String> created() {
    Map<String, String> headers = new LinkedHashMap<>();
    tracing.publish("rocketmq", "publish", "orders", "m-1", headers::put).close();
    return headers;
  }

  private SpanData span(String name) {
    List<SpanData> all = exporter.getFinishedSpanItems();
    return all.stream().filter(s -> s.getName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("no span " + name + " in " + all));
  }
}
