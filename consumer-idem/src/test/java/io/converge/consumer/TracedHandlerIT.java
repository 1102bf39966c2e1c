package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.Envelope;
import io.converge.core.tracing.OpenTelemetryTracing;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The consumer's process span on a real PostgreSQL: current for the handler's work, linked or parent, bad input. */
class TracedHandlerIT extends LedgerTestBase {

  private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String CREATION = "00-" + TRACE + "-00f067aa0ba902b7-01";

  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
      .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build();

  TracedHandlerIT(DataSource ds) {
    super(ds);
  }

  @AfterEach
  void close() {
    sdk.close();
  }

  private IdempotentHandler handler(boolean asParent) {
    return IdempotentHandler.builder().group("traced").dataSource(ds).policy(Db.FAST)
        .tracing(OpenTelemetryTracing.of(sdk)).traceAsParent(asParent)
        .handler((c, m) -> {
          Span query = sdk.getTracer("test").spanBuilder("INSERT ledger").startSpan(); // the handler's own span
          Db.insertLedger(c, m);
          query.end();
        }).build();
  }

  private static IncomingMessage message(String traceparent) {
    return IncomingMessage.builder().topic("payments").header(Envelope.MESSAGE_ID, UUID.randomUUID().toString())
        .header(Envelope.TRACEPARENT, traceparent).payload("{\"amount\":\"10.00\"}").build();
  }

  private SpanData span(String name) {
    return exporter.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void theHandlersWorkRunsUnderAProcessSpanLinkedToTheCreationContext() {
    IncomingMessage m = message(CREATION);
    assertThat(handler(false).handle(m)).isEqualTo(Outcome.PROCESSED);
    SpanData process = span("process payments");
    assertThat(process.getKind()).isEqualTo(SpanKind.CONSUMER);
    assertThat(process.getTraceId()).isNotEqualTo(TRACE);
    assertThat(process.getLinks()).singleElement()
        .satisfies(l -> assertThat(l.getSpanContext().getTraceId()).isEqualTo(TRACE));
    assertThat(process.getAttributes().get(AttributeKey.stringKey("messaging.consumer.group.name")))
        .isEqualTo("traced");
    assertThat(process.getAttributes().get(AttributeKey.stringKey("messaging.message.id")))
        .isEqualTo(m.envelopeMessageId());
    assertThat(process.getAttributes().get(AttributeKey.stringKey("converge.outcome"))).isEqualTo("processed");
    assertThat(span("INSERT ledger").getParentSpanId()).isEqualTo(process.getSpanId());
  }

  @Test
  void asParentTheProcessSpanContinuesTheProducersTrace() {
    assertThat(handler(true).handle(message(CREATION))).isEqualTo(Outcome.PROCESSED);
    SpanData process = span("process payments");
    assertThat(process.getTraceId()).isEqualTo(TRACE);
    assertThat(process.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
    assertThat(span("INSERT ledger").getTraceId()).isEqualTo(TRACE);
  }

  @Test
  void aMalformedTraceparentIsIgnoredTheMessageIsProcessedInANewTrace() {
    IdempotentHandler h = handler(true);
    assertThat(h.handle(message("ff-" + TRACE + "-00f067aa0ba902b7-01"))).isEqualTo(Outcome.PROCESSED);
    assertThat(h.handle(message("00-" + TRACE + "-0000000000000000-01"))).isEqualTo(Outcome.PROCESSED);
    assertThat(h.handle(message("00-" + TRACE.toUpperCase() + "-00f067aa0ba902b7-01"))).isEqualTo(Outcome.PROCESSED);
    assertThat(exporter.getFinishedSpanItems()).filteredOn(s -> s.getName().equals("process payments")).hasSize(3)
        .allSatisfy(s -> {
          assertThat(s.getTraceId()).isNotEqualTo(TRACE);
          assertThat(s.getParentSpanContext().isValid()).isFalse();
          assertThat(s.getLinks()).isEmpty();
        });
  }
}
