package io.converge.pulsar.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.internal.RowLifecycle.Move;
import org.junit.jupiter.api.Test;

/**
 * Recovery's moves on {@code RowLifecycle} are the statements it wrote out before: the same claim (conditions, order,
 * lock); the failed attempt counted in SQL on the row its claim locked (before: the claim's count + 1, bound).
 */
class PulsarTxnStoreLifecycleTest {

  @Test
  void theClaimTakesTheOldestDueUnparkedTransactionOfAGroupPastTheGrace() {
    assertThat(normalised(PulsarTxnStore.LIFECYCLE.statement(Move.CLAIM_NEXT))).isEqualTo(normalised("""
        SELECT txn_most, txn_least, deadline, attempts FROM converge_pulsar_txn
        WHERE parked_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= now())
          AND (producer_group = ? AND created_at < now() - make_interval(secs => ?))
        ORDER BY created_at LIMIT 1
        FOR UPDATE SKIP LOCKED"""));
  }

  @Test
  void aFailedAttemptIsRetriedLaterOrParks() {
    assertThat(normalised(PulsarTxnStore.LIFECYCLE.statement(Move.RETRY_LATER))).isEqualTo(normalised("""
        UPDATE converge_pulsar_txn SET attempts = attempts + 1, reason = ?,
               next_attempt_at = now() + make_interval(secs => ?)
        WHERE (txn_most, txn_least) = (?, ?)"""));
    assertThat(normalised(PulsarTxnStore.LIFECYCLE.statement(Move.PARK))).isEqualTo(normalised("""
        UPDATE converge_pulsar_txn SET attempts = attempts + 1, reason = ?, parked_at = now()
        WHERE (txn_most, txn_least) = (?, ?)"""));
  }

  private static String normalised(String sql) {
    return sql.replaceAll("\\s+", " ").strip();
  }
}
