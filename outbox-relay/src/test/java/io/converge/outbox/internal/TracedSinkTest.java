package io.converge.outbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.tracing.OpenTelemetryTracing;
import io.converge.core.tracing.Tracing;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.SendAllResult;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The relay's send spans: one per row, linked to the creation context stored with it; a refused row's fails. */
class TracedSinkTest {

  private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
      .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build();

  /** A sink that refuses the row of seq 2 (no broker: the spans are what this test is about). */
  private final OutboxSink refusesTwo = new OutboxSink() {

    @Override
    public String name() {
      return "rocketmq";
    }

    @Override
    public void send(OutboxRecord record) {
      if (record.seq() == 2) {
        throw new IllegalStateException("refused");
      }
    }

    @Override
    public void close() {
    }
  };

  @AfterEach
  void close() {
    sdk.close();
  }

  private static OutboxRecord row(long seq) {
    return new OutboxRecord(seq, "m-" + seq, "orders", "k-" + seq, null,
        Map.of("traceparent", "00-" + TRACE + "-00f067aa0ba902b" + seq + "-01"), new byte[0], 0);
  }

  @Test
  void eachSendIsAProducerSpanLinkedToItsRowsCreationContext() {
    OutboxSink sink = TracedSink.wrap(refusesTwo, OpenTelemetryTracing.of(sdk));
    SendAllResult result = sink.sendAll(List.of(row(1), row(2)));
    assertThat(result.failed()).hasSize(1);
    List<SpanData> spans = exporter.getFinishedSpanItems();
    assertThat(spans).hasSize(2).allSatisfy(s -> {
      assertThat(s.getName()).isEqualTo("send orders");
      assertThat(s.getKind()).isEqualTo(SpanKind.PRODUCER);
      assertThat(s.getTraceId()).isNotEqualTo(TRACE);
      assertThat(s.getLinks()).singleElement()
          .satisfies(l -> assertThat(l.getSpanContext().getTraceId()).isEqualTo(TRACE));
    });
    SpanData refused = spans.stream().filter(s -> s.getLinks().get(0).getSpanContext().getSpanId().endsWith("2"))
        .findFirst().orElseThrow();
    assertThat(refused.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
  }

  @Test
  void withoutTracingTheSinkIsUnwrapped() {
    assertThat(TracedSink.wrap(refusesTwo, Tracing.none())).isSameAs(refusesTwo);
  }
}
