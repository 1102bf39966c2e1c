package io.converge.consumer;

import io.converge.consumer.StateMachine.Cause;
import io.converge.consumer.StateMachine.Versioned;
import io.converge.consumer.internal.HandlerScope;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The SQL of one {@link StateMachine}: the read, the compare-and-swap (with its history row in the same statement,
 * a data-modifying CTE) and the history rows written alone. A statement that meets no history table fails with
 * {@link StateHistoryMissingException}: the database's own "undefined table" error is translated, so the check
 * costs no round trip and holds for every database the machine is used on. Immutable and thread-safe.
 */
final class TransitionStatements<S extends Enum<S>> {

  private static final Pattern IDENTIFIER = Pattern
      .compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");
  private static final String INSERT_HISTORY = "INSERT INTO " + StateMachine.HISTORY_TABLE
      + " (machine, entity_id, tenant, from_state, to_state, version, cause, message_id, final)";
  /** "No such table": PostgreSQL, H2 (two modes). */
  private static final Set<String> MISSING_TABLE_STATES = Set.of("42P01", "42S02", "42102");

  private final String entityType;
  private final Class<S> states;
  private final Function<S, Set<S>> targets;
  private final String selectSql;
  private final String updateSql;
  /** The compare-and-swap and its history row in one statement; null without history. */
  private final String updateWithHistorySql;

  TransitionStatements(String entityType, Class<S> states, Function<S, Set<S>> targets, String table, String idColumn,
      String stateColumn, String versionColumn, boolean history) {
    identifier(entityType, "table", table);
    identifier(entityType, "idColumn", idColumn);
    identifier(entityType, "stateColumn", stateColumn);
    identifier(entityType, "versionColumn", versionColumn);
    this.entityType = entityType;
    this.states = states;
    this.targets = targets;
    this.selectSql = "SELECT " + stateColumn + ", " + versionColumn + " FROM " + table + " WHERE " + idColumn + " = ?";
    this.updateSql = "UPDATE " + table + " SET " + stateColumn + " = ?, " + versionColumn + " = " + versionColumn
        + " + 1 WHERE " + idColumn + " = ? AND " + stateColumn + " = ? AND " + versionColumn + " = ?";
    this.updateWithHistorySql = history
        ? "WITH moved AS (" + updateSql + " RETURNING " + versionColumn + " AS new_version) " + INSERT_HISTORY
            + " SELECT ?, ?, ?, ?, ?, new_version, ?, ?, ? FROM moved"
        : null;
  }

  /** The SQL is built from these names: each must be a plain (optionally schema-qualified) identifier. */
  private static void identifier(String entityType, String what, String value) {
    Require.that(value != null && IDENTIFIER.matcher(value).matches(), "stateMachine." + entityType + "." + what,
        "be an SQL identifier matching " + IDENTIFIER.pattern(), value);
  }

  boolean recordsHistory() {
    return updateWithHistorySql != null;
  }

  Optional<Versioned<S>> read(Connection c, Object id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(selectSql)) {
      ps.setObject(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(new Versioned<>(Enum.valueOf(states, rs.getString(1)), rs.getLong(2)));
      }
    }
  }

  /** True when the entity moved (and, with history, its row was appended). */
  boolean compareAndSwap(Connection c, Object id, S from, long expectedVersion, S to, Cause cause)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(updateWithHistorySql != null ? updateWithHistorySql : updateSql)) {
      ps.setString(1, to.name());
      ps.setObject(2, id);
      ps.setString(3, from.name());
      ps.setLong(4, expectedVersion);
      if (updateWithHistorySql != null) {
        bindHistory(ps, 5, id, from, to, null, cause);
      }
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw historyMissing(e);
    }
  }

  /** The error of a lost compare-and-swap, saying where the entity is now. */
  StaleStateException stale(Connection c, Object id, S from, long expectedVersion) throws SQLException {
    String now = read(c, id).map(v -> "but it is " + v.state() + " at version " + v.version())
        .orElse("but it no longer exists");
    return new StaleStateException(entityType, id, from.name(), expectedVersion, now);
  }

  /** Appends one history row ({@code from} null for a creation). */
  void insertHistory(Connection c, Object id, S from, S to, long version, Cause cause) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT_HISTORY + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      bindHistory(ps, 1, id, from, to, version, cause);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw historyMissing(e);
    }
  }

  /**
   * Binds machine, entity_id, tenant, from, to, version (when not null; else the statement has it), cause,
   * message_id and final from parameter {@code p}.
   */
  private void bindHistory(PreparedStatement ps, int p, Object id, S from, S to, Long version, Cause cause)
      throws SQLException {
    Cause c = orFromHandler(Objects.requireNonNullElse(cause, Cause.NONE), HandlerScope.current());
    ps.setString(p++, entityType);
    ps.setString(p++, String.valueOf(id));
    ps.setString(p++, c.tenant());
    ps.setString(p++, from == null ? null : from.name());
    ps.setString(p++, to.name());
    if (version != null) {
      ps.setLong(p++, version);
    }
    ps.setString(p++, c.cause());
    ps.setString(p++, c.messageId());
    ps.setBoolean(p, targets.apply(to).isEmpty());
  }

  /** {@code cause} with its null fields taken from the running idempotent handler {@code h}, if any. */
  private static Cause orFromHandler(Cause cause, HandlerScope.Current h) {
    if (h == null) {
      return cause;
    }
    return new Cause(cause.cause() != null ? cause.cause() : "consumer " + h.group(),
        cause.messageId() != null ? cause.messageId() : h.messageId(),
        cause.tenant() != null ? cause.tenant() : h.tenant());
  }

  /**
   * The server's "relation converge_state_transition does not exist" (PostgreSQL 42P01, H2 42S02/42102, exactly:
   * not the rest of class 42 such as a refused permission or a missing column) as
   * {@link StateHistoryMissingException}; any other error unchanged. Translated, not looked up beforehand, so that
   * a machine used on several databases is right on each.
   */
  private SQLException historyMissing(SQLException e) {
    if (isHistoryMissing(e)) {
      throw new StateHistoryMissingException(entityType, e);
    }
    return e;
  }

  /** Whether {@code e} says that the history table does not exist (see {@link #historyMissing}). */
  static boolean isHistoryMissing(SQLException e) {
    String text = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
    return MISSING_TABLE_STATES.contains(String.valueOf(e.getSQLState())) && text.contains(StateMachine.HISTORY_TABLE);
  }
}
