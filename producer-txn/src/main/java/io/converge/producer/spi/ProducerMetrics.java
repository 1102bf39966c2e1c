package io.converge.producer.spi;

import java.time.Duration;

/** What producers count. Implementations are thread-safe; {@link #NONE} counts nothing. */
public interface ProducerMetrics {

  /** Counts nothing. */
  ProducerMetrics NONE = new ProducerMetrics() {
  };

  /** A check-back was answered ({@code COMMIT}, {@code ROLLBACK} or {@code UNKNOWN}): {@code txn.checkbacks}. */
  default void checkBack(String answer) {
  }

  /**
   * A check-back found no row for a message older than the log retention and answered UNKNOWN (a
   * ticket was raised): {@code txn.checkbacks.past-retention}. Alert on it.
   */
  default void checkBackPastRetention() {
  }

  /**
   * An END (commit/rollback of a prepared message) was dropped because the broker was too slow to
   * take it; the check-back resolves the message later: {@code txn.ends.dropped}.
   */
  default void endDropped() {
  }

  /**
   * A record of {@code converge_txn_end} (an END that did not arrive, a check-back, a late END) was lost: the
   * recorder was full or closed, or writing it failed; the console may miss or keep a waiting unit, the message
   * is not affected: {@code txn.end-records.lost}.
   */
  default void endRecordLost() {
  }

  /** Messages published but not yet committed or rolled back changed by {@code delta}: {@code txn.pending}. */
  default void pending(int delta) {
  }

  /** One send to the broker took {@code latency}: {@code txn.send.latency}. */
  default void sent(Duration latency) {
  }
}
