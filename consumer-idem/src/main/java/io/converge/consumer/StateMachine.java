package io.converge.consumer;

import io.converge.core.ConvergeException;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The states of one entity type and the whitelist of transitions between them (article 4.1-4.2). A
 * transition is one compare-and-swap {@code UPDATE <table> SET state = ?, version = version + 1
 * WHERE id = ? AND state = ? AND version = ?}; an illegal transition throws
 * {@link IllegalTransitionException}, a lost race (0 rows) is resolved by the {@link ConflictPolicy}
 * and never silently overwritten. States are stored as their enum {@code name()} in a text column.
 *
 * <p><b>History.</b> By default each transition also appends a row to {@code converge_state_transition}
 * (migration {@code consumer}, V3) in the same statement as its compare-and-swap (a data-modifying CTE): the row
 * exists iff the transition commits, a refused or stale transition writes none. The row names the machine (the
 * entity type), the entity id, from, to, the new version, whether the target is final (has no outgoing
 * transition), and what caused it: inside an {@link IdempotentHandler} the consumer group and the message id
 * (and its tenant), otherwise the {@link Cause} passed, else nothing. {@link Builder#history(boolean) history(false)}
 * turns it off. Without the table (the migration not applied) a transition, {@link #record} and
 * {@link #recordCreated} fail with {@link StateHistoryMissingException}, which names the migration: the database's
 * own "no such table" error is translated, on every use and for every database the machine is used on.
 *
 * <p>With JPA, call {@link #check} in the entity's state setter and let {@code @Version} do the
 * compare-and-swap; {@code check} has no connection, so it records nothing: call {@link #record} on the
 * transaction's connection (in Spring, {@link io.converge.consumer.spring.TransitionHistory}; else Hibernate's
 * {@code session.doWork}), so that the row commits or rolls back with the entity, and {@link #recordCreated} when
 * the entity is inserted. Immutable and thread-safe.
 *
 * @param <S> the enum of states
 */
public final class StateMachine<S extends Enum<S>> {

  /** What to do when the compare-and-swap updates no row because another writer moved the entity first. */
  public enum ConflictPolicy {
    /** Throw {@link StaleStateException}. The default. */
    FAIL,
    /** Re-read the state and version and try again (the whitelist is checked again), up to 3 times. */
    RETRY,
    /** Succeed quietly when the entity is already in the target state (a duplicate event); else fail. */
    ACCEPT_IF_ALREADY_IN_TARGET
  }

  /** A state with the version it was read at. */
  public record Versioned<S>(S state, long version) {
  }

  /**
   * What caused a transition, for its history row; every field may be null. Inside an idempotent handler a
   * null field is taken from the running message (cause {@code consumer <group>}, its message id and tenant).
   *
   * @param cause who or what moved the entity (an operator, a job, an endpoint)
   * @param messageId the message (or Idempotency-Key) the transition belongs to
   * @param tenant the tenant of the entity
   */
  public record Cause(String cause, String messageId, String tenant) {

    /** No explicit cause: the running handler's, if any. */
    public static final Cause NONE = new Cause(null, null, null);

    /** A cause without message id or tenant. */
    public static Cause of(String cause) {
      return new Cause(cause, null, null);
    }
  }

  /** The history table; see the class comment. */
  public static final String HISTORY_TABLE = "converge_state_transition";

  private static final int RETRIES = 3;

  private final String entityType;
  private final Map<S, Set<S>> allowed;
  private final ConflictPolicy conflictPolicy;
  private final TransitionStatements<S> sql;

  private StateMachine(Builder<S> b) {
    this.entityType = b.entityType;
    Map<S, Set<S>> copy = new EnumMap<>(b.states);
    b.allowed.forEach((from, tos) -> copy.put(from, Collections.unmodifiableSet(EnumSet.copyOf(tos))));
    this.allowed = Collections.unmodifiableMap(copy);
    this.conflictPolicy = b.conflictPolicy;
    this.sql = new TransitionStatements<>(entityType, b.states, this::targets, b.table, b.idColumn, b.stateColumn,
        b.versionColumn, b.history);
  }

  /** A builder for entity type {@code entityType} (used in errors) whose states are {@code states}. */
  public static <S extends Enum<S>> Builder<S> builder(String entityType, Class<S> states) {
    return new Builder<>(entityType, states);
  }

  /** The entity type's name. */
  public String entityType() {
    return entityType;
  }

  /** True when the whitelist allows {@code from -> to}. */
  public boolean isAllowed(S from, S to) {
    return allowed.getOrDefault(Objects.requireNonNull(from, "from"), Set.of())
        .contains(Objects.requireNonNull(to, "to"));
  }

  /** The states reachable from {@code from} in one transition; empty for a final state. */
  public Set<S> targets(S from) {
    return allowed.getOrDefault(from, Set.of());
  }

  /**
   * Refuses a transition the whitelist does not allow.
   *
   * @param entityId for the error message; may be null
   * @throws IllegalTransitionException naming entity, from and to
   */
  public void check(Object entityId, S from, S to) {
    if (!isAllowed(from, to)) {
      throw new IllegalTransitionException(entityType, entityId, from.name(), to.name());
    }
  }

  /** The current state and version of entity {@code id}, or empty when no such row exists. */
  public Optional<Versioned<S>> read(Connection c, Object id) throws SQLException {
    return sql.read(c, id);
  }

  /**
   * One compare-and-swap transition from a state and version the caller read earlier.
   *
   * @return the new version ({@code expectedVersion + 1})
   * @throws IllegalTransitionException when the whitelist refuses {@code from -> to}
   * @throws StaleStateException when the entity is no longer at {@code from}/{@code expectedVersion}
   */
  public long transition(Connection c, Object id, S from, long expectedVersion, S to) throws SQLException {
    return transition(c, id, from, expectedVersion, to, Cause.NONE);
  }

  /**
   * As {@link #transition(Connection, Object, Enum, long, Enum)}, recording {@code cause} in the history row.
   *
   * @param cause what caused it; its null fields are taken from the running idempotent handler, if any
   */
  public long transition(Connection c, Object id, S from, long expectedVersion, S to, Cause cause)
      throws SQLException {
    check(id, from, to);
    if (!sql.compareAndSwap(c, id, from, expectedVersion, to, cause)) {
      throw sql.stale(c, id, from, expectedVersion);
    }
    return expectedVersion + 1;
  }

  /**
   * Reads the entity, checks the whitelist from its current state and moves it to {@code to} with a
   * compare-and-swap; a lost race is handled by the {@link ConflictPolicy}.
   *
   * @return the state and version after the call
   * @throws IllegalTransitionException when the whitelist refuses the move from the current state
   * @throws StaleStateException when the race is lost and the policy does not resolve it
   * @throws ConvergeException when no entity {@code id} exists
   */
  public Versioned<S> transition(Connection c, Object id, S to) throws SQLException {
    return transition(c, id, to, Cause.NONE);
  }

  /**
   * As {@link #transition(Connection, Object, Enum)}, recording {@code cause} in the history row. A duplicate
   * accepted by {@link ConflictPolicy#ACCEPT_IF_ALREADY_IN_TARGET} moves nothing and records nothing.
   *
   * @param cause what caused it; its null fields are taken from the running idempotent handler, if any
   */
  public Versioned<S> transition(Connection c, Object id, S to, Cause cause) throws SQLException {
    for (int attempt = 0;; attempt++) {
      Versioned<S> current = read(c, id)
          .orElseThrow(() -> new ConvergeException("No " + entityType + " " + id + ": cannot move it to " + to));
      if (current.state() == to && conflictPolicy == ConflictPolicy.ACCEPT_IF_ALREADY_IN_TARGET && !isAllowed(to, to)) {
        return current;
      }
      check(id, current.state(), to);
      if (sql.compareAndSwap(c, id, current.state(), current.version(), to, cause)) {
        return new Versioned<>(to, current.version() + 1);
      }
      if (conflictPolicy == ConflictPolicy.RETRY && attempt < RETRIES) {
        continue;
      }
      if (conflictPolicy == ConflictPolicy.ACCEPT_IF_ALREADY_IN_TARGET) {
        Optional<Versioned<S>> now = read(c, id);
        if (now.isPresent() && now.get().state() == to) {
          return now.get();
        }
      }
      throw sql.stale(c, id, current.state(), current.version());
    }
  }

  /**
   * Appends the history row of a transition the caller made itself (the JPA path: {@link #check} in the setter,
   * {@code @Version} doing the compare-and-swap), on the connection of the transaction that commits it.
   *
   * @param newVersion the entity's version after the transition
   * @param cause what caused it; its null fields are taken from the running idempotent handler, if any
   * @throws IllegalTransitionException when the whitelist refuses {@code from -> to} (nothing is written)
   */
  public void record(Connection c, Object id, S from, S to, long newVersion, Cause cause) throws SQLException {
    check(id, from, to);
    sql.insertHistory(c, id, from, to, newVersion, cause);
  }

  /**
   * Appends the history row of an entity's creation in state {@code initial} ({@code from} is null), on the
   * connection of the transaction that inserts it: the first line of its timeline.
   *
   * @param version the entity's version as inserted (JPA's {@code @Version} starts at 0)
   * @param cause what caused it; its null fields are taken from the running idempotent handler, if any
   * @throws StateHistoryMissingException when the database has no history table
   */
  public void recordCreated(Connection c, Object id, S initial, long version, Cause cause) throws SQLException {
    sql.insertHistory(c, id, null, Objects.requireNonNull(initial, "initial"), version, cause);
  }

  /** True when the history is recorded (the default). */
  public boolean recordsHistory() {
    return sql.recordsHistory();
  }

  /** Builds a {@link StateMachine}. Not thread-safe. */
  public static final class Builder<S extends Enum<S>> {

    private final String entityType;
    private final Class<S> states;
    private final Map<S, Set<S>> allowed;
    private String table;
    private String idColumn = "id";
    private String stateColumn = "state";
    private String versionColumn = "version";
    private ConflictPolicy conflictPolicy = ConflictPolicy.FAIL;
    private boolean history = true;

    private Builder(String entityType, Class<S> states) {
      Require.that(entityType != null && !entityType.isBlank(), "stateMachine.entityType", "not be blank", entityType);
      this.entityType = entityType;
      this.states = Objects.requireNonNull(states, "states");
      this.allowed = new EnumMap<>(states);
      this.table = entityType;
    }

    /** Allows {@code from -> to} for every target in {@code to}. */
    @SafeVarargs
    public final Builder<S> allow(S from, S... to) {
      Set<S> set = allowed.computeIfAbsent(Objects.requireNonNull(from, "from"), k -> EnumSet.noneOf(states));
      for (S t : to) {
        set.add(Objects.requireNonNull(t, "to"));
      }
      return this;
    }

    /** The table holding the entities; default the entity type. */
    public Builder<S> table(String table) {
      this.table = table;
      return this;
    }

    /** The id, state and version columns; defaults {@code id}, {@code state}, {@code version}. */
    public Builder<S> columns(String id, String state, String version) {
      this.idColumn = id;
      this.stateColumn = state;
      this.versionColumn = version;
      return this;
    }

    /** The conflict policy of {@link StateMachine#transition(Connection, Object, Enum)}; default {@link ConflictPolicy#FAIL}. */
    public Builder<S> onConflict(ConflictPolicy policy) {
      this.conflictPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Whether each transition appends its row to {@code converge_state_transition} (needs the {@code consumer}
     * migrations); default true.
     */
    public Builder<S> history(boolean history) {
      this.history = history;
      return this;
    }

    /** The state machine. @throws IllegalArgumentException for an empty whitelist or an unsafe SQL identifier */
    public StateMachine<S> build() {
      if (allowed.isEmpty()) {
        throw new IllegalArgumentException(
            "stateMachine." + entityType + " must allow at least one transition, but allows none");
      }
      return new StateMachine<>(this);
    }
  }
}
