package io.converge.saga.internal;

import io.converge.saga.SagaState;
import java.time.Instant;

/**
 * A {@code converge_saga} row as read (its {@code createdAt}: the saga's age, which bounds the commands sent for it), and the changes a transition makes to it (with-ers). Immutable.
 */
record SagaRow(String id, String tenant, String definition, SagaState state, int step, int attempt, int sends,
    int failures, boolean awaiting, long version, String data, Instant nextAttemptAt, Instant deadline,
    String lastError, Instant createdAt, String traceparent, String tracestate) {

  /**
   * The saga's trace context as headers ({@code traceparent}, {@code tracestate}): the parent of every span of its
   * steps; empty for a saga started without one (or before the column existed): its spans start new traces.
   */
  java.util.Map<String, String> trace() {
    java.util.Map<String, String> m = new java.util.HashMap<>(2);
    if (traceparent != null) {
      m.put(io.converge.core.Envelope.TRACEPARENT, traceparent);
      if (tracestate != null) {
        m.put("tracestate", tracestate);
      }
    }
    return m;
  }

  SagaRow at(SagaState s, int stepIndex) {
    return new SagaRow(id, tenant, definition, s, stepIndex, 0, 0, 0, false, version, data, nextAttemptAt, deadline,
        lastError, createdAt, traceparent, tracestate);
  }

  SagaRow withData(String d) {
    return new SagaRow(id, tenant, definition, state, step, attempt, sends, failures, awaiting, version, d,
        nextAttemptAt, deadline, lastError, createdAt, traceparent, tracestate);
  }

  SagaRow sent(int newAttempt, int newSends, Instant next) {
    return new SagaRow(id, tenant, definition, state, step, newAttempt, newSends, failures, true, version, data, next,
        deadline, lastError, createdAt, traceparent, tracestate);
  }

  SagaRow pending(int newAttempt, int newFailures, Instant next, String error) {
    return new SagaRow(id, tenant, definition, state, step, newAttempt, sends, newFailures, false, version, data, next,
        deadline, error, createdAt, traceparent, tracestate);
  }

  SagaRow finished(SagaState s, String error) {
    return new SagaRow(id, tenant, definition, s, step, attempt, sends, failures, false, version, data, null, deadline,
        error, createdAt, traceparent, tracestate);
  }
}
