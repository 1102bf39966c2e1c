package io.converge.examples.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The demo's trace file: one JSON line per span, appended, with the service, the ids, the parent and the links. */
class JsonLinesSpanExporterTest {

  @Test
  void appendsOneEscapedLinePerSpanWithItsServiceParentAndLinks(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("spans.jsonl");
    try (SdkTracerProvider provider = SdkTracerProvider.builder()
        .setResource(Resource.create(Attributes.of(ServiceTracing.SERVICE_NAME, "order")))
        .addSpanProcessor(SimpleSpanProcessor.create(new JsonLinesSpanExporter(file))).build()) {
      Tracer tracer = provider.get("test");
      Span server = tracer.spanBuilder("POST /orders").setSpanKind(SpanKind.SERVER).startSpan();
      Span child;
      try (Scope ignored = server.makeCurrent()) {
        child = tracer.spanBuilder("publish order-created").setSpanKind(SpanKind.PRODUCER)
            .setAttribute(AttributeKey.stringKey("note"), "a \"quoted\"\nline").addLink(server.getSpanContext())
            .startSpan();
        child.end();
      }
      server.end();

      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      assertThat(lines).hasSize(2);
      String id = server.getSpanContext().getSpanId();
      String trace = server.getSpanContext().getTraceId();
      assertThat(lines.get(0)).startsWith("{\"service\":\"order\",\"traceId\":\"" + trace + "\"")
          .contains("\"spanId\":\"" + child.getSpanContext().getSpanId() + "\"", "\"parentSpanId\":\"" + id + "\"",
              "\"name\":\"publish order-created\"", "\"kind\":\"PRODUCER\"",
              "\"note\":\"a \\\"quoted\\\"\\nline\"", "\"links\":[{\"traceId\":\"" + trace + "\",\"spanId\":\"" + id
                  + "\"}]")
          .endsWith("}");
      assertThat(lines.get(1)).contains("\"parentSpanId\":null", "\"name\":\"POST /orders\"", "\"kind\":\"SERVER\"",
          "\"links\":[]");
    }
  }
}
