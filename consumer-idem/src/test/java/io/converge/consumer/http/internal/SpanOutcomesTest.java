package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.consumer.http.IdempotencyMetrics;
import io.converge.consumer.http.IdempotencyProblem;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The Idempotency-Key and the outcome on the request's server span: first run, replay, 409, 422, 503. */
class SpanOutcomesTest {

  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
      .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build();
  private final IdempotencyMetrics metrics = SpanOutcomes.wrap(IdempotencyMetrics.NONE);

  @AfterEach
  void close() {
    sdk.close();
  }

  private String outcomeOf(Consumer<IdempotencyMetrics> request) {
    exporter.reset();
    Span server = sdk.getTracer("test").spanBuilder("POST /orders").setSpanKind(SpanKind.SERVER).startSpan();
    try (Scope ignored = server.makeCurrent()) {
      SpanOutcomes.key("k-1");
      request.accept(metrics);
    } finally {
      server.end();
    }
    var attributes = exporter.getFinishedSpanItems().get(0).getAttributes();
    assertThat(attributes.get(AttributeKey.stringKey(SpanOutcomes.KEY))).isEqualTo("k-1");
    return attributes.get(AttributeKey.stringKey(SpanOutcomes.OUTCOME));
  }

  @Test
  void eachOutcomeIsAnAttributeOfTheServerSpan() {
    assertThat(outcomeOf(m -> m.claimed("POST /orders"))).isEqualTo("first-run");
    assertThat(outcomeOf(m -> m.hit("POST /orders"))).isEqualTo("replay");
    assertThat(outcomeOf(m -> m.inProgress("POST /orders"))).isEqualTo("in-progress");
    assertThat(outcomeOf(m -> m.conflict("POST /orders"))).isEqualTo("key-reused");
    assertThat(outcomeOf(m -> m.rejected("POST /orders", IdempotencyProblem.STORE_UNAVAILABLE)))
        .isEqualTo("store-unavailable");
    // the handler ran, then its commit's outcome was unknown: the 503 is the last word
    assertThat(outcomeOf(m -> {
      m.claimed("POST /orders");
      m.rejected("POST /orders", IdempotencyProblem.OUTCOME_UNKNOWN);
    })).isEqualTo("outcome-unknown");
  }

  @Test
  void withoutACurrentSpanNothingHappens() {
    metrics.claimed("POST /orders");
    SpanOutcomes.key("k-1");
    assertThat(Span.current().getSpanContext().isValid()).isFalse();
  }
}
