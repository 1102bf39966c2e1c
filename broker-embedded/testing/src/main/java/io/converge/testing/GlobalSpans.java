package io.converge.testing;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;

/**
 * An OpenTelemetry SDK with an in-memory exporter, installed as {@code GlobalOpenTelemetry} (what every Converge
 * builder traces with by default) until it is closed. Spans of other tests running meanwhile are recorded too: read
 * them by trace id.
 */
public final class GlobalSpans implements AutoCloseable {

  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
      .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
      .build();

  private GlobalSpans() {
  }

  /** Installs a new SDK as the global instance (replacing the no-op one a first use fixed). */
  public static synchronized GlobalSpans install() {
    GlobalSpans spans = new GlobalSpans();
    for (int attempt = 1;; attempt++) {
      GlobalOpenTelemetry.resetForTest();
      try {
        GlobalOpenTelemetry.set(spans.sdk);
        return spans;
      } catch (IllegalStateException e) {
        // a concurrent test's span fixed a no-op instance between the reset and the set
        if (attempt == 100) {
          throw e;
        }
      }
    }
  }

  /** A tracer of the SDK, for the test's own spans (e.g. the HTTP request's). */
  public Tracer tracer() {
    return sdk.getTracer("test");
  }

  /** The finished spans of trace {@code traceId}. */
  public List<SpanData> trace(String traceId) {
    return exporter.getFinishedSpanItems().stream().filter(s -> s.getTraceId().equals(traceId)).toList();
  }

  /** Every finished span so far. */
  public List<SpanData> all() {
    return exporter.getFinishedSpanItems();
  }

  @Override
  public synchronized void close() {
    GlobalOpenTelemetry.resetForTest();
    sdk.close();
  }
}
