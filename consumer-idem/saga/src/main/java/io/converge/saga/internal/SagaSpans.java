package io.converge.saga.internal;

import io.converge.core.tracing.MessageSpan;
import io.converge.core.tracing.Tracing;
import java.util.Map;

/**
 * The spans of a saga (issue 34): one {@code saga <definition>} span at its start, whose context its row stores, and
 * under it, whatever coordinator instance makes them and however late, one {@code saga step <step>} span per command
 * sent (first send, re-send after a timeout or a restart, compensation), per HTTP branch call (a CLIENT span whose
 * request carries its {@code traceparent}), per reply applied and per local step. Each has the attributes
 * {@code converge.saga.id}, {@code .definition}, {@code .step}, {@code .attempt}, {@code .direction} and
 * {@code .event} (the timeline's event kind: {@code SENT}, {@code RESENT}, {@code REPLIED}...). Nothing with
 * {@link Tracing#none()}. Thread-safe.
 */
final class SagaSpans {

  private final Tracing tracing;

  SagaSpans(Tracing tracing) {
    this.tracing = tracing;
  }

  /** The saga's span, under the current context; its context is written to {@code trace} (the row stores it). */
  MessageSpan saga(String definition, String sagaId, Map<String, String> trace) {
    return tracing.internal("saga " + definition, null, trace::put).attribute("converge.saga.id", sagaId)
        .attribute("converge.saga.definition", definition);
  }

  /** A span of {@code row}'s step {@code step}, a child of the saga's stored context (current until closed). */
  MessageSpan step(SagaRow row, String step, int attempt, String direction, String event) {
    return attributes(tracing.internal("saga step " + step, row.trace(), null), row.id(), row.definition(), step,
        attempt, direction, event);
  }

  /** The CLIENT span of an HTTP branch call; its context goes into {@code headers} (the request's). */
  MessageSpan call(HttpBranches.Call c, Map<String, String> headers) {
    return attributes(tracing.client("saga step " + c.step(), c.trace(), headers::put), c.sagaId(), null, c.step(),
        c.attempt(), c.direction(), c.operation().wireName()).attribute("http.request.method", "POST")
        .attribute("url.full", c.url().toString());
  }

  private static MessageSpan attributes(MessageSpan span, String id, String definition, String step, int attempt,
      String direction, String event) {
    return span.attribute("converge.saga.id", id).attribute("converge.saga.definition", definition)
        .attribute("converge.saga.step", step).attribute("converge.saga.attempt", Integer.toString(attempt))
        .attribute("converge.saga.direction", direction).attribute("converge.saga.event", event);
  }
}
