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
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
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
  void aReDrivenDeadLetterContinuesTheOriginalTraceDaysLater() throws Exception {
    AtomicBoolean failing = new AtomicBoolean(true);
    IdempotentHandler h = IdempotentHandler.builder().group("redriven").dataSource(ds)
        .policy(Db.FAST.withMaxAttempts(1)).tracing(OpenTelemetryTracing.of(sdk)).traceAsParent(true)
        .handler((c, m) -> {
          if (failing.get()) {
            throw new IllegalStateException("ledger locked");
          }
          Db.insertLedger(c, m);
        }).build();
    IncomingMessage parked = message(CREATION);
    assertThat(h.handle(parked)).isEqualTo(Outcome.DEAD_LETTERED);
    exporter.reset();
    failing.set(false);
    long dlqId;
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st
            .executeQuery("SELECT id FROM converge_dlq WHERE consumer_group = 'redriven' AND message_id = '"
                + parked.envelopeMessageId() + "'")) {
      assertThat(rs.next()).isTrue();
      dlqId = rs.getLong(1);
    }
    assertThat(ConsumerOps.of(ds).redrive(dlqId)).isTrue();
    assertThat(h.releaseHeld(List.of("payments"))).isEqualTo(1);

    SpanData redrive = span("process payments");
    assertThat(redrive.getKind()).isEqualTo(SpanKind.CONSUMER);
    assertThat(redrive.getTraceId()).as("the creation context stored with the dead letter").isEqualTo(TRACE);
    assertThat(redrive.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
    assertThat(redrive.getAttributes().get(AttributeKey.stringKey("converge.redrive"))).isEqualTo("redrive");
    assertThat(redrive.getAttributes().get(AttributeKey.stringKey("converge.dlq.id"))).isEqualTo(Long.toString(dlqId));
    assertThat(redrive.getAttributes().get(AttributeKey.stringKey("converge.outcome"))).isEqualTo("processed");
    assertThat(redrive.getAttributes().get(AttributeKey.stringKey("messaging.message.id")))
        .isEqualTo(parked.envelopeMessageId());
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
