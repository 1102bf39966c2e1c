package io.converge.examples.events;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends one JSON object per span to a file, one line each: {@code service}, {@code traceId}, {@code spanId},
 * {@code parentSpanId}, {@code name}, {@code kind}, {@code startNanos}, {@code endNanos}, {@code status},
 * {@code attributes} (values as strings) and {@code links} ({@code traceId}, {@code spanId}). Several services may
 * append to one file: each line is written whole under a lock shared by every instance of this JVM. A failed write is
 * logged and reported as a failed export, never thrown into the traced work.
 */
public final class JsonLinesSpanExporter implements SpanExporter {

  private static final Logger log = LoggerFactory.getLogger(JsonLinesSpanExporter.class);
  private static final Object LOCK = new Object();

  private final Path file;

  /** Appends to {@code file}, created when missing. */
  public JsonLinesSpanExporter(Path file) {
    this.file = file;
  }

  @Override
  public CompletableResultCode export(Collection<SpanData> spans) {
    StringBuilder lines = new StringBuilder();
    for (SpanData s : spans) {
      line(lines, s);
    }
    synchronized (LOCK) {
      try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND)) {
        w.write(lines.toString());
      } catch (IOException e) {
        log.warn("cannot append {} spans to {}: {}", spans.size(), file, e.toString());
        return CompletableResultCode.ofFailure();
      }
    }
    return CompletableResultCode.ofSuccess();
  }

  /** One span as a JSON line. */
  static void line(StringBuilder b, SpanData s) {
    b.append("{\"service\":");
    string(b, s.getResource().getAttribute(ServiceTracing.SERVICE_NAME));
    b.append(",\"traceId\":");
    string(b, s.getTraceId());
    b.append(",\"spanId\":");
    string(b, s.getSpanId());
    b.append(",\"parentSpanId\":");
    string(b, s.getParentSpanContext().isValid() ? s.getParentSpanId() : null);
    b.append(",\"name\":");
    string(b, s.getName());
    b.append(",\"kind\":");
    string(b, s.getKind().name());
    b.append(",\"startNanos\":").append(s.getStartEpochNanos()).append(",\"endNanos\":").append(s.getEndEpochNanos());
    b.append(",\"status\":");
    string(b, s.getStatus().getStatusCode().name());
    b.append(",\"attributes\":{");
    boolean[] first = {true};
    s.getAttributes().forEach((k, v) -> {
      if (!first[0]) {
        b.append(',');
      }
      first[0] = false;
      string(b, k.getKey());
      b.append(':');
      string(b, String.valueOf(v));
    });
    b.append("},\"links\":[");
    for (int i = 0; i < s.getLinks().size(); i++) {
      LinkData l = s.getLinks().get(i);
      b.append(i == 0 ? "" : ",").append("{\"traceId\":");
      string(b, l.getSpanContext().getTraceId());
      b.append(",\"spanId\":");
      string(b, l.getSpanContext().getSpanId());
      b.append('}');
    }
    b.append("]}\n");
  }

  private static void string(StringBuilder b, String v) {
    if (v == null) {
      b.append("null");
      return;
    }
    b.append('"');
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }

  @Override
  public CompletableResultCode flush() {
    return CompletableResultCode.ofSuccess();
  }

  @Override
  public CompletableResultCode shutdown() {
    return CompletableResultCode.ofSuccess();
  }
}
