package io.converge.pulsar.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.internal.RowLifecycle.Move;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Recovery's moves on {@code RowLifecycle}, in both tables of the log, are the statements it wrote out before: the same claim (conditions, order,
 * lock); the failed attempt counted in SQL on the row its claim locked (before: the claim's count + 1, bound).
 */
class PulsarTxnStoreLifecycleTest {

  @ParameterizedTest
  @EnumSource(LogLayout.class)
  void theClaimTakesTheOldestDueUnparkedTransactionOfAGroupPastTheGrace(LogLayout layout) {
    assertThat(normalised(layout.lifecycle.statement(Move.CLAIM_NEXT))).isEqualTo(normalised("""
        SELECT txn_most, txn_least, deadline, attempts FROM %s
        WHERE parked_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= now())
          AND (producer_group = ? AND created_at < now() - make_interval(secs => ?))
        ORDER BY created_at LIMIT 1
        FOR UPDATE SKIP LOCKED""".formatted(layout.table)));
  }

  @ParameterizedTest
  @EnumSource(LogLayout.class)
  void aFailedAttemptIsRetriedLaterOrParks(LogLayout layout) {
    assertThat(normalised(layout.lifecycle.statement(Move.RETRY_LATER))).isEqualTo(normalised("""
        UPDATE %s SET attempts = attempts + 1, reason = ?,
               next_attempt_at = now() + make_interval(secs => ?)
        WHERE (txn_most, txn_least) = (?, ?)""".formatted(layout.table)));
    assertThat(normalised(layout.lifecycle.statement(Move.PARK))).isEqualTo(normalised("""
        UPDATE %s SET attempts = attempts + 1, reason = ?, parked_at = now()
        WHERE (txn_most, txn_least) = (?, ?)""".formatted(layout.table)));
  }

  private static String normalised(String sql) {
    return sql.replaceAll("\\s+", " ").strip();
  }
}
