package io.converge.saga;

import io.converge.core.internal.Require;
import java.time.Duration;
import java.time.Instant;

/**
 * How long a {@link SagaParticipant} keeps its barrier rows ({@code converge_saga_branch}), tied to the guarantee, and
 * the limit it puts on the coordinator. A step's forward row is what a later compensation undoes and what a re-sent
 * forward command replays; once purged, a compensation finds nothing (recorded {@code EMPTY}: nothing undone, the
 * money kept) and a re-sent forward command runs again. So the participants keep the rows longer than the coordinator
 * may still send a command of the saga, and the coordinator refuses to send one ({@link #maySend}) for a saga older
 * than the retention less {@link #SEND_MARGIN}: automatically (the saga stops with a ticket) or on an operator's
 * action ({@link SagaTooOldException}). Immutable; validated on construction.
 *
 * <p>The participants configure it as {@code converge.saga.branch-retention} ({@link SagaBranchPurger}), the
 * coordinator as {@code converge.saga.participant-retention} ({@link SagaCoordinatorBuilder#participantRetention},
 * {@link SagaOps#of(javax.sql.DataSource, java.time.Clock, Duration)}): the same value, or a shorter one on the
 * coordinator; never a longer one.
 *
 * @param retention how long a step's rows are kept after the last of them was written, by the participant database's
 *     clock; at least {@link #MIN_RETENTION}; default {@link #DEFAULT_RETENTION}
 */
public record SagaBranchRetention(Duration retention) {

  /**
   * The shortest retention: 7 days. Longer than a broker's redelivery window (about 4 h 46 min), than a
   * saga's longest automatic course with the default window, and than a weekend an operator may take to act on a
   * ticket.
   */
  public static final Duration MIN_RETENTION = Duration.ofDays(7);

  /** The default retention: 30 days. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(30);

  /**
   * What the coordinator keeps off the retention when it decides whether it may still send: 1 day, for a command
   * that waits in the broker (a consumer backlog, a paused participant) before it is handled, and for the skew between
   * the coordinator's clock (a saga's age) and the participant database's (a row's age).
   */
  public static final Duration SEND_MARGIN = Duration.ofDays(1);

  /** The default window past a saga's deadline in which the coordinator may still send its commands: 1 day. */
  public static final Duration DEFAULT_RETRY_WINDOW = Duration.ofDays(1);

  /**
   * Validates the retention.
   *
   * @throws IllegalArgumentException naming the setting and quoting the bad value
   */
  public SagaBranchRetention {
    Require.atLeast("converge.saga.branch-retention", retention, MIN_RETENTION,
        MIN_RETENTION + " (a broker's redelivery window, a saga's course, a weekend's wait for an operator)");
  }

  /** The default retention. */
  public static SagaBranchRetention defaults() {
    return new SagaBranchRetention(DEFAULT_RETENTION);
  }

  /** The age past which the coordinator sends no command of a saga: the retention less {@link #SEND_MARGIN}. */
  public Duration sendHorizon() {
    return retention.minus(SEND_MARGIN);
  }

  /** Whether a command of a saga created at {@code createdAt} may still be sent at {@code now}. */
  public boolean maySend(Instant createdAt, Instant now) {
    return Duration.between(createdAt, now).compareTo(sendHorizon()) < 0;
  }

  /**
   * Checks that the saga {@code definition}'s whole course fits in the retention: its deadline (forward commands),
   * plus {@code retryWindow} (its compensations, their re-sends and rate-limit waits past the deadline), plus
   * {@link #SEND_MARGIN}. A saga that runs longer is still safe (the coordinator refuses to send and opens a ticket),
   * but it then needs a person: a configuration that makes that the normal course is refused.
   *
   * @throws IllegalArgumentException naming the definition and quoting the durations
   */
  public void covering(String definition, Duration deadline, Duration retryWindow) {
    Require.notNegative("saga.retryWindow", retryWindow);
    Duration window = deadline.plus(retryWindow).plus(SEND_MARGIN);
    Require.that(window.compareTo(retention) <= 0, "saga.participantRetention",
        "be at least the deadline of saga '" + definition + "' + the retry window + the send margin (" + deadline
            + " + "
            + retryWindow + " + " + SEND_MARGIN + " = " + window + "): the participants would purge the rows its"
            + " compensations must find",
        retention);
  }
}
