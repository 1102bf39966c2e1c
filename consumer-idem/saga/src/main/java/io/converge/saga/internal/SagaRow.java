package io.converge.saga.internal;

import io.converge.saga.SagaState;
import java.time.Instant;

/**
 * A {@code converge_saga} row as read (its {@code createdAt}: the saga's age, which bounds the commands sent for it), and the changes a transition makes to it (with-ers). Immutable.
 */
record SagaRow(String id, String tenant, String definition, SagaState state, int step, int attempt, int sends,
    int failures, boolean awaiting, long version, String data, Instant nextAttemptAt, Instant deadline,
    String lastError, Instant createdAt) {

  SagaRow at(SagaState s, int stepIndex) {
    return new SagaRow(id, tenant, definition, s, stepIndex, 0, 0, 0, false, version, data, nextAttemptAt, deadline,
        lastError, createdAt);
  }

  SagaRow withData(String d) {
    return new SagaRow(id, tenant, definition, state, step, attempt, sends, failures, awaiting, version, d,
        nextAttemptAt, deadline, lastError, createdAt);
  }

  SagaRow sent(int newAttempt, int newSends, Instant next) {
    return new SagaRow(id, tenant, definition, state, step, newAttempt, newSends, failures, true, version, data, next,
        deadline, lastError, createdAt);
  }

  SagaRow pending(int newAttempt, int newFailures, Instant next, String error) {
    return new SagaRow(id, tenant, definition, state, step, newAttempt, sends, newFailures, false, version, data, next,
        deadline, error, createdAt);
  }

  SagaRow finished(SagaState s, String error) {
    return new SagaRow(id, tenant, definition, s, step, attempt, sends, failures, false, version, data, null, deadline,
        error, createdAt);
  }
}
