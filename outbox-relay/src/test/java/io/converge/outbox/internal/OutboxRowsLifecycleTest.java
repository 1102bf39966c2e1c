package io.converge.outbox.internal;

import static io.converge.outbox.OutboxLinesTest.normalised;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.internal.RowLifecycle.Move;
import org.junit.jupiter.api.Test;

/**
 * The outbox's moves on {@code RowLifecycle} are the statements it wrote out before: the same table, columns,
 * conditions, order and locks (the claim's columns unqualified, as its only table is {@code o}; the refusal, the
 * postponement and the publication as they were, the key as {@code (seq) = (?)}).
 */
class OutboxRowsLifecycleTest {

  @Test
  void theDueClaimIsTheHeadsClaim() {
    assertThat(normalised(OutboxRows.LIFECYCLE.statement(Move.CLAIM_DUE))).isEqualTo(normalised("""
        SELECT seq, attempts FROM converge_outbox o
        WHERE (published_at IS NULL) AND parked_at IS NULL
          AND (next_attempt_at IS NULL OR next_attempt_at <= now())
          AND (o.created_at <= now() - make_interval(secs => ?)
               AND NOT EXISTS (SELECT 1 FROM converge_outbox p
                               WHERE p.order_key = o.order_key AND p.tenant = o.tenant AND p.topic = o.topic
                                 AND p.seq < o.seq AND p.published_at IS NULL))
        ORDER BY seq
        LIMIT ?
        FOR UPDATE OF o SKIP LOCKED"""));
  }

  @Test
  void aRefusalCountsAndParksAtTheLastAttemptAnOutagePostponesAndSentRowsArePublishedOnce() {
    assertThat(normalised(OutboxRows.LIFECYCLE.statement(Move.RETRY_OR_PARK))).isEqualTo(normalised("""
        UPDATE converge_outbox
        SET attempts = attempts + 1, last_error = ?, next_attempt_at = now() + make_interval(secs => ?),
            parked_at = CASE WHEN attempts + 1 >= ? THEN now() END
        WHERE (seq) = (?)"""));
    assertThat(normalised(OutboxRows.LIFECYCLE.statement(Move.POSTPONE))).isEqualTo(normalised("""
        UPDATE converge_outbox SET last_error = ?, next_attempt_at = now() + make_interval(secs => ?) WHERE (seq) = (?)
        """));
    assertThat(normalised(OutboxRows.LIFECYCLE.statement(Move.COMPLETE_ALL))).isEqualTo(normalised("""
        UPDATE converge_outbox SET published_at = now() WHERE seq = ANY (?) AND (published_at IS NULL)"""));
  }
}
