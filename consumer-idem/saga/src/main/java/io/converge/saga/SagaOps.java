package io.converge.saga;

import io.converge.core.internal.Require;
import io.converge.saga.internal.SagaOpsStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;

/**
 * What an operator sees of the sagas and the audited actions on them (the {@code converge saga} commands). Reads
 * and changes {@code converge_saga}, {@code converge_saga_event} and {@code converge_saga_ticket} only; needs no
 * saga definition, so it runs where the coordinator does not (the command line, the console).
 *
 * <p>Every action is one short transaction: it reads the saga, checks its state, and changes it with a
 * compare-and-swap on {@code version} together with an event ({@code OPERATOR_RETRY}, {@code OPERATOR_COMPENSATE},
 * {@code OPERATOR_RESOLVED}) whose payload is {@code "<operator>: <note>"}. A coordinator's transition that commits
 * in between wins: the action then changes nothing and throws {@link StaleSagaException}. An action that does not
 * apply throws {@link SagaOperationRefusedException}. The actions only move the saga to where the coordinator's own
 * rules take over (a due time, a deadline): no step or compensation logic is run or duplicated here; a coordinator's
 * next poll does the work.
 *
 * <p>Times (ages, the due time and the deadline an action sets) come from the clock given to {@link #of(DataSource,
 * Clock)}: it should agree with the coordinators' clocks (a clock ahead of theirs delays the action by the
 * difference). Database errors are {@code DatabaseUnavailableException} or {@code DatabaseRefusedException}.
 * Thread-safe.
 */
public final class SagaOps {

  /** The states {@link #list} shows: the coordinator drives the first two; the last two wait for a person. */
  public static final Set<SagaState> LISTED = Collections.unmodifiableSet(EnumSet.of(SagaState.RUNNING,
      SagaState.COMPENSATING, SagaState.COMPENSATION_FAILED, SagaState.STOPPED));

  /** The most rows {@link #list} returns. */
  public static final int MAX_LIMIT = 10_000;

  /**
   * Which sagas {@link #list} shows: those in an intermediate state ({@code RUNNING}, {@code COMPENSATING}) and
   * those stopped for a person with a ticket still open ({@code COMPENSATION_FAILED}, {@code STOPPED}), oldest first.
   * Immutable; {@link #all()} and the {@code with…} methods.
   *
   * @param states of these states only (a non-empty subset of {@link #LISTED}; default all of them)
   * @param definition of this definition only; null: any (the default)
   * @param olderThan started at least this long ago (default zero: any age)
   * @param limit at most this many, 1 to {@link #MAX_LIMIT} (default 100)
   */
  public record Filter(Set<SagaState> states, String definition, Duration olderThan, int limit) {

    /** Validates; errors name the property and quote the value. */
    public Filter {
      Require.that(states != null && !states.isEmpty() && LISTED.containsAll(states), "saga.ops.filter.states",
          "be a non-empty subset of " + LISTED, states);
      states = Set.copyOf(states);
      Require.notNegative("saga.ops.filter.olderThan", olderThan);
      Require.between("saga.ops.filter.limit", limit, 1, MAX_LIMIT);
    }

    /** Every listed saga, at most 100. */
    public static Filter all() {
      return new Filter(LISTED, null, Duration.ZERO, 100);
    }

    /** This filter, of {@code only} these states. */
    public Filter withStates(Set<SagaState> only) {
      return new Filter(only, definition, olderThan, limit);
    }

    /** This filter, of definition {@code name} only (null: any). */
    public Filter withDefinition(String name) {
      return new Filter(states, name, olderThan, limit);
    }

    /** This filter, of sagas started at least {@code age} ago. */
    public Filter withOlderThan(Duration age) {
      return new Filter(states, definition, age, limit);
    }

    /** This filter, at most {@code max} rows. */
    public Filter withLimit(int max) {
      return new Filter(states, definition, olderThan, max);
    }
  }

  /**
   * A saga as listed.
   *
   * @param stepName the current step's name; null once final
   * @param age how long ago it started ({@code now - created_at})
   * @param nextAttemptAt when the coordinator looks at it again; null once final
   * @param lastError why its last send or compensation failed; null when none did
   * @param openTickets its tickets still open
   */
  public record Saga(String id, String definition, SagaState state, String stepName, int attempt, long version,
      Instant createdAt, Duration age, Instant nextAttemptAt, String lastError, int openTickets) {
  }

  /**
   * One event of a saga's timeline ({@code converge_saga_event}).
   *
   * @param step the step it is about; null for the saga as a whole
   * @param attempt the step's attempt; null when none
   * @param messageId the command or reply it is about; null when none
   * @param payload a reply's body, an error, an operator's note; null when none
   */
  public record Event(long seq, String step, Integer attempt, String kind, String messageId, String payload,
      Instant at) {
  }

  /**
   * A ticket of a saga ({@code converge_saga_ticket}).
   *
   * @param kind {@code COMPENSATION_FAILED} or {@code ANOMALY}
   * @param status {@code OPEN} or {@code RESOLVED}
   * @param resolvedAt null while open
   */
  public record Ticket(long id, String sagaId, String step, String kind, String reason, String status,
      Instant createdAt, Instant resolvedAt, String resolvedBy, String resolution) {
  }

  /**
   * A saga with everything recorded about it.
   *
   * @param saga the row as listed
   * @param step the current step's index (forward) or the step being compensated
   * @param sends sends of the current step in all
   * @param failures failed sends of the current compensation
   * @param awaiting whether a command is out and its reply awaited
   * @param data the saga's data (JSON)
   * @param events its timeline, in order
   * @param tickets its tickets, oldest first
   */
  public record Detail(Saga saga, String tenant, int step, int sends, int failures, boolean awaiting, String data,
      Instant deadline, Instant updatedAt, List<Event> events, List<Ticket> tickets) {

    /** Copies the lists. */
    public Detail {
      events = List.copyOf(events);
      tickets = List.copyOf(tickets);
    }
  }

  private final SagaOpsStore store;

  private SagaOps(DataSource dataSource, Clock clock, SagaBranchRetention participantRetention) {
    this.store = new SagaOpsStore(Objects.requireNonNull(dataSource, "dataSource"),
        Objects.requireNonNull(clock, "clock"), Objects.requireNonNull(participantRetention, "participantRetention"));
  }

  /**
   * Ops on the saga tables of {@code dataSource}, with {@code clock} for ages and for the times actions set, and the
   * participants' default retention ({@link SagaBranchRetention#DEFAULT_RETENTION}).
   */
  public static SagaOps of(DataSource dataSource, Clock clock) {
    return of(dataSource, clock, SagaBranchRetention.DEFAULT_RETENTION);
  }

  /**
   * Ops as {@link #of(DataSource, Clock)}, where the participants keep their rows for {@code participantRetention}
   * ({@code converge.saga.participant-retention}): {@link #retry} and {@link #compensate} refuse a saga older than it
   * less {@link SagaBranchRetention#SEND_MARGIN} ({@link SagaTooOldException}).
   *
   * @throws IllegalArgumentException when {@code participantRetention} is under
   *     {@link SagaBranchRetention#MIN_RETENTION}
   */
  public static SagaOps of(DataSource dataSource, Clock clock, Duration participantRetention) {
    return new SagaOps(dataSource, clock, new SagaBranchRetention(participantRetention));
  }

  /** Ops on the saga tables of {@code dataSource} with the UTC system clock. */
  public static SagaOps of(DataSource dataSource) {
    return of(dataSource, Clock.systemUTC());
  }

  /** The sagas {@code filter} selects, oldest first, at most its limit. */
  public List<Saga> list(Filter filter) {
    return store.list(Objects.requireNonNull(filter, "filter"));
  }

  /** How many sagas {@code filter} selects, without its limit. */
  public long count(Filter filter) {
    return store.count(Objects.requireNonNull(filter, "filter"));
  }

  /**
   * The open tickets of sagas that have no row any more, oldest first, at most {@code limit} (1 to
   * {@link #MAX_LIMIT}): a compensation whose {@code SUCCESS} arrived after its saga was purged opens an
   * {@code ANOMALY} ticket with no saga to list it under. {@link #resolve} closes them by saga id,
   * {@link #resolveTicket} by ticket id.
   */
  public List<Ticket> orphanTickets(int limit) {
    Require.between("saga.ops.orphanTickets.limit", limit, 1, MAX_LIMIT);
    return store.orphanTickets(limit);
  }

  /** Saga {@code id} with its timeline and tickets; empty when there is no such saga. */
  public Optional<Detail> show(String id) {
    return store.show(Objects.requireNonNull(id, "id"));
  }

  /**
   * Makes the coordinator drive saga {@code id} again now. For a {@code RUNNING} or {@code COMPENSATING} saga: due
   * now, with its current command marked as not out, so the next poll sends it again with the same command id (a
   * participant that did the work answers with its stored reply; no failure is counted). For a
   * {@code COMPENSATION_FAILED} saga: back to {@code COMPENSATING} at the step that failed, failures reset to 0, a
   * new attempt, due now: the next poll sends its compensation again (and counts its failures anew); its ticket
   * stays open until {@link #resolve}. A {@code RUNNING} saga past its deadline compensates on that poll, as it
   * would have.
   *
   * @param operator who asks (recorded; not blank)
   * @param note why (recorded; nullable)
   * @return the saga as changed
   * @throws SagaOperationRefusedException no such saga, or it is {@code COMPLETED}, {@code COMPENSATED} or
   *     {@code STOPPED}
   * @throws SagaTooOldException the saga is older than the participants keep its steps' rows (a TCC global
   *     transaction too: these ops do not know the definitions)
   * @throws StaleSagaException a coordinator changed it meanwhile; nothing was changed
   */
  public Saga retry(String id, String operator, String note) {
    return store.retry(Objects.requireNonNull(id, "id"), operator(operator), note);
  }

  /**
   * Makes the coordinator compensate {@code RUNNING} saga {@code id} through its own deadline path: its deadline
   * and due time set to now (an earlier deadline is kept), so its next poll records {@code DEADLINE} and compensates
   * the steps that were sent, last first, as at any deadline.
   *
   * @param operator who asks (recorded; not blank)
   * @param note why (recorded; nullable)
   * @return the saga as changed
   * @throws SagaOperationRefusedException no such saga, or it is not {@code RUNNING}
   * @throws SagaTooOldException the saga is older than the participants keep its steps' rows: its compensation could
   *     find its forward row purged and undo nothing
   * @throws StaleSagaException a coordinator changed it meanwhile; nothing was changed
   */
  public Saga compensate(String id, String operator, String note) {
    return store.compensate(Objects.requireNonNull(id, "id"), operator(operator), note);
  }

  /**
   * Closes every open ticket of saga {@code sagaId} ({@code RESOLVED}, when, by whom, the resolution), each with an
   * {@code OPERATOR_RESOLVED} event. The saga's state does not change.
   *
   * @param operator who resolved it (recorded; not blank)
   * @param resolution what was done (recorded; nullable)
   * @return the tickets closed, oldest first
   * @throws SagaOperationRefusedException no such saga, or it has no open ticket
   */
  public List<Ticket> resolve(String sagaId, String operator, String resolution) {
    return store.resolve(Objects.requireNonNull(sagaId, "sagaId"), null, operator(operator), resolution);
  }

  /**
   * Closes ticket {@code ticketId} as {@link #resolve} does.
   *
   * @return the ticket closed
   * @throws SagaOperationRefusedException no such ticket, or it is not open
   */
  public Ticket resolveTicket(long ticketId, String operator, String resolution) {
    return store.resolve(null, ticketId, operator(operator), resolution).get(0);
  }

  private static String operator(String operator) {
    Require.that(operator != null && !operator.isBlank(), "saga.ops.operator", "name who acts", operator);
    return operator;
  }
}
