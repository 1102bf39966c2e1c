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
           WHERE (delivered_at IS NULL) AND attempts < ? AND next_attempt_at <= now()
           ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING kind, item_id, payload, attempts""", """
        UPDATE converge_stuck_notified SET attempts = attempts + 1, last_error = ?, \
        next_attempt_at = now() + make_interval(secs => ?)
         WHERE (kind, item_id) = (?, ?) AND (delivered_at IS NULL)""", """
        UPDATE converge_stuck_notified SET delivered_at = now(), last_error = NULL
         WHERE (kind, item_id) = (?, ?) AND (delivered_at IS NULL)""");
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

  /** A claimed lifecycle like the outbox's: an alias for the caller's sub-query, a batch claim, a batch completion. */
  static RowLifecycle.Builder queue() {
    return RowLifecycle.builder("queue").key("seq").returning("body").attempts("attempts").dueAt("next_attempt_at")
        .reason("last_error").parkedAt("parked_at").openUntil("done_at IS NULL", "done_at = now()")
        .claimAlias("q").claimOrder("seq")
        .claimWhere("q.topic = ? AND NOT EXISTS (SELECT 1 FROM queue e WHERE e.topic = q.topic AND e.seq < q.seq"
            + " AND e.done_at IS NULL)");
  }

  @Test
  void generatesTheClaimedMoves() {
    RowLifecycle queue = queue().build();
    assertThat(queue.statement(RowLifecycle.Move.CLAIM_DUE)).isEqualTo("""
        SELECT seq, body, attempts FROM queue q
         WHERE (done_at IS NULL) AND parked_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= now())
           AND (q.topic = ? AND NOT EXISTS (SELECT 1 FROM queue e WHERE e.topic = q.topic AND e.seq < q.seq \
        AND e.done_at IS NULL))
         ORDER BY seq LIMIT ? FOR UPDATE OF q SKIP LOCKED""");
    assertThat(queue.statement(RowLifecycle.Move.CLAIM_NEXT))
        .isEqualTo(queue.statement(RowLifecycle.Move.CLAIM_DUE).replace("LIMIT ?", "LIMIT 1"));
    assertThat(queue.statement(RowLifecycle.Move.RETRY_LATER)).as("the claim's lock guards the claimed row")
        .isEqualTo("""
            UPDATE queue SET attempts = attempts + 1, last_error = ?, next_attempt_at = now() + make_interval(secs => ?)
             WHERE (seq) = (?)""");
    assertThat(queue.statement(RowLifecycle.Move.RETRY_OR_PARK)).isEqualTo("""
        UPDATE queue SET attempts = attempts + 1, last_error = ?, next_attempt_at = now() + make_interval(secs => ?),
            parked_at = CASE WHEN attempts + 1 >= ? THEN now() END
         WHERE (seq) = (?)""");
    assertThat(queue.statement(RowLifecycle.Move.PARK)).isEqualTo("""
        UPDATE queue SET attempts = attempts + 1, last_error = ?, parked_at = now()
         WHERE (seq) = (?)""");
    assertThat(queue.statement(RowLifecycle.Move.POSTPONE)).isEqualTo("""
        UPDATE queue SET last_error = ?, next_attempt_at = now() + make_interval(secs => ?)
         WHERE (seq) = (?)""");
    assertThat(queue.statement(RowLifecycle.Move.COMPLETE)).isEqualTo("""
        UPDATE queue SET done_at = now()
         WHERE (seq) = (?) AND (done_at IS NULL)""");
    assertThat(queue.statement(RowLifecycle.Move.COMPLETE_ALL)).isEqualTo("""
        UPDATE queue SET done_at = now()
         WHERE seq = ANY (?) AND (done_at IS NULL)""");
  }

  @Test
  void aClaimedLifecycleWithoutAnOpenPredicateClaimsInTheDueOrderAndDoesNotComplete() {
    RowLifecycle txns = RowLifecycle.builder("txns").key("hi", "lo").attempts("attempts").dueAt("next_attempt_at")
        .reason("reason").parkedAt("parked_at").build();
    assertThat(txns.statement(RowLifecycle.Move.CLAIM_NEXT)).isEqualTo("""
        SELECT hi, lo, attempts FROM txns
         WHERE parked_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= now())
         ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED""");
    assertThat(txns.statement(RowLifecycle.Move.RETRY_LATER)).endsWith("\n WHERE (hi, lo) = (?, ?)");
    assertThatThrownBy(() -> txns.statement(RowLifecycle.Move.COMPLETE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("The claimed row lifecycle of txns (key [hi, lo], no open predicate) has no move COMPLETE");
    assertThatThrownBy(() -> txns.statement(RowLifecycle.Move.LEASE)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aLeasedLifecycleHasNoClaimsAndRefusesClaimSettings() {
    RowLifecycle notified = notified().build();
    assertThatThrownBy(() -> notified.statement(RowLifecycle.Move.CLAIM_DUE))
        .hasMessage("The leased row lifecycle of converge_stuck_notified (key [kind, item_id]) has no move CLAIM_DUE");
    assertThatThrownBy(() -> notified.statement(RowLifecycle.Move.COMPLETE_ALL))
        .as("a key of two columns").isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> notified().claimOrder("kind").build()).hasMessageContaining(
        "rowLifecycle.parkedAt must be named for a claim's order, conditions or alias");
    assertThatThrownBy(() -> queue().claimAlias("Q")).hasMessage(
        "rowLifecycle.claimAlias must match [a-z_][a-z0-9_]*, but was Q");
    assertThatThrownBy(() -> queue().claimWhere(" ").build()).hasMessageContaining("rowLifecycle.claimWhere");
  }
}
