package io.converge.consumer.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The retries of one handler's release rounds ({@link IdempotentHandlerImpl#releaseHeld}): a row whose run
 * failed for a technical reason is not retried by sleeping on the release thread, which would stall every other
 * row of the round (other keys, other re-drives); its next attempt is due after the policy's backoff and runs at
 * the first round after that (the bindings run rounds on a schedule). In memory: another instance may take the
 * row meanwhile, and a restart starts its attempts again. Thread-safe.
 */
final class RetrySchedule {

  private record Due(int attempts, Instant notBefore) {
  }

  private final Map<Long, Due> due = new ConcurrentHashMap<>();
  private final Clock clock;

  RetrySchedule(Clock clock) {
    this.clock = clock;
  }

  /** True when row {@code dlqId} backs off: it is skipped by this round. */
  boolean waiting(long dlqId) {
    Due d = due.get(dlqId);
    return d != null && clock.instant().isBefore(d.notBefore());
  }

  /** The failed attempts of row {@code dlqId} since it last ran or settled; 0 when none. */
  int attempts(long dlqId) {
    Due d = due.get(dlqId);
    return d == null ? 0 : d.attempts();
  }

  /** Row {@code dlqId} failed its attempt {@code attempts}: its next one is due after {@code backoff}. */
  void retryLater(long dlqId, int attempts, Duration backoff) {
    due.put(dlqId, new Due(attempts, clock.instant().plus(backoff)));
  }

  /** Row {@code dlqId} ran or settled: nothing is due. */
  void settled(long dlqId) {
    due.remove(dlqId);
  }

  /** Forgets the rows a complete round no longer saw (settled by another instance or by ops). */
  void retainOnly(Set<Long> seen) {
    due.keySet().retainAll(seen);
  }
}
