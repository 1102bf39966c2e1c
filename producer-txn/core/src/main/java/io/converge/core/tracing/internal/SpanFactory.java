package io.converge.core.tracing.internal;

import io.converge.core.tracing.MessageSpan;
import java.util.Map;
import java.util.function.BiConsumer;

/** What {@link io.converge.core.tracing.Tracing} asks of OpenTelemetry, in types of its own. Thread-safe. */
public interface SpanFactory {

  /** See {@link io.converge.core.tracing.Tracing#publish}. */
  MessageSpan publish(String system, String operation, String topic, String messageId,
      BiConsumer<String, String> headers);

  /** See {@link io.converge.core.tracing.Tracing#send}. */
  MessageSpan send(String system, String topic, String messageId, Map<String, String> headers);

  /** See {@link io.converge.core.tracing.Tracing#process}. */
  MessageSpan process(String system, String topic, String messageId, String group, Map<String, String> headers,
      boolean asParent);

  /** See {@link io.converge.core.tracing.Tracing#internal}, {@code client} and {@code server}. */
  MessageSpan span(String name, Kind kind, Map<String, String> parent, BiConsumer<String, String> headers);

  /** The kinds of the spans that are not about one message. */
  enum Kind {
    INTERNAL, CLIENT, SERVER
  }
}
