package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The statements a lifecycle generates once, and the names it refuses. */
class RowLifecycleTest {

  static RowLifecycle.Builder notified() {
    return RowLifecycle.builder("converge_stuck_notified").key("kind", "item_id").returning("payload")
        .attempts("attempts").dueAt("next_attempt_at").reason("last_error")
        .openUntil("delivered_at IS NULL", "delivered_at = now(), last_error = NULL");
  }

  @Test
  void generatesTheLeaseRetryAndCompleteStatements() {
    assertThat(notified().build().statements()).containsExactly("""
        UPDATE converge_stuck_notified SET next_attempt_at = now() + make_interval(secs => ?)
         WHERE (kind, item_id) = (SELECT kind, item_id FROM converge_stuck_notified
           WHERE delivered_at IS NULL AND attempts < ? AND next_attempt_at <= now()
           ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING kind, item_id, payload, attempts""", """
        UPDATE converge_stuck_notified SET attempts = attempts + 1, last_error = ?, \
        next_attempt_at = now() + make_interval(secs => ?)
         WHERE (kind, item_id) = (?, ?) AND delivered_at IS NULL""", """
        UPDATE converge_stuck_notified SET delivered_at = now(), last_error = NULL
         WHERE (kind, item_id) = (?, ?) AND delivered_at IS NULL""");
  }

  @Test
  void refusesNamesThatAreNotPlainColumnsAndMissingParts() {
    assertThatThrownBy(() -> RowLifecycle.builder("t; DROP TABLE x"))
        .hasMessage("rowLifecycle.table must match [a-z_][a-z0-9_]*, but was t; DROP TABLE x");
    assertThatThrownBy(() -> notified().key("Kind"))
        .hasMessage("rowLifecycle.key must match [a-z_][a-z0-9_]*, but was Kind");
    assertThatThrownBy(() -> RowLifecycle.builder("t").attempts("a").dueAt("d").reason("r")
        .openUntil("done IS NULL", "done = now()").build())
        .hasMessageContaining("rowLifecycle.key must name at least one column");
    assertThatThrownBy(() -> RowLifecycle.builder("t").key("id").dueAt("d").reason("r")
        .openUntil("done IS NULL", "done = now()").build())
        .hasMessageContaining("rowLifecycle.attempts");
  }
}
