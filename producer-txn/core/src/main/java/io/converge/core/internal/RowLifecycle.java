package io.converge.core.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The life of a row that waits for work in a table, in one of two shapes.
 *
 * <ul>
 *   <li><b>Leased</b> (no {@link Builder#parkedAt} column): {@link #lease} takes the oldest due row (one at a time,
 *   {@code FOR UPDATE SKIP LOCKED}) and makes it due later, so that no other instance takes it after the lease's
 *   statement commits; {@link #retryLater} counts a failed attempt with its reason; {@link #complete} closes it once.
 *   A row past the attempts is parked: it is never leased again. Every move is guarded by the open predicate.</li>
 *   <li><b>Claimed</b> (a {@link Builder#parkedAt} column): {@link #claimNext} and {@link #claimDue} lock the oldest
 *   open, unparked rows that are due (a null due time is due) and pass the rows another transaction holds
 *   ({@code SKIP LOCKED}); the lock, held until the caller's transaction ends, is what keeps other instances off
 *   them, so the moves on a claimed row ({@link #retryLater}, {@link #retryOrPark}, {@link #park},
 *   {@link #postpone}) name it by its key alone. {@link #complete} and {@link #completeAll} are guarded by the
 *   open predicate, which a claimed lifecycle may leave out when its completion is the caller's (a delete).</li>
 * </ul>
 *
 * <p>The SQL is generated once, at {@link Builder#build()}, from column names checked against
 * {@code [a-z_][a-z0-9_]*}; no text of a caller reaches the statements but the predicates it wrote in code
 * ({@link Builder#openUntil}, {@link Builder#claimWhere}). Statements run on the caller's connection, in its
 * transaction. Immutable and thread-safe.
 *
 * <p>Used by the console's stuck webhook ({@code converge_stuck_notified}, leased), the outbox's relays
 * ({@code converge_outbox}, claimed) and Pulsar recovery ({@code converge_pulsar_unit} and
 * {@code converge_pulsar_txn}, claimed).
 */
public final class RowLifecycle {

  private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]*");
  private static final String LIMIT = "%LIMIT%";

  /** The statements a lifecycle can run, each generated once. */
  public enum Move {
    LEASE, CLAIM_NEXT, CLAIM_DUE, RETRY_LATER, RETRY_OR_PARK, PARK, POSTPONE, COMPLETE, COMPLETE_ALL
  }

  private final String table;
  private final List<String> key;
  private final List<String> returning;
  private final boolean claimed;
  private final boolean closes;
  private final Map<Move, String> sql = new EnumMap<>(Move.class);

  private RowLifecycle(Builder b) {
    this.table = b.table;
    this.key = List.copyOf(b.key);
    this.returning = List.copyOf(b.returning);
    this.claimed = b.parkedAt != null;
    this.closes = b.open != null;
    String keys = String.join(", ", key);
    // the open predicate is the caller's: in parentheses, so that an OR in it cannot swallow the other conditions
    String open = b.open == null ? null : "(" + b.open + ")";
    String byKey = "(" + keys + ") = (" + "?, ".repeat(key.size() - 1) + "?)";
    List<String> out = new ArrayList<>(key);
    out.addAll(returning);
    out.add(b.attempts);
    String due = b.dueAt + " = now() + make_interval(secs => ?)";
    String counted = b.attempts + " = " + b.attempts + " + 1, " + b.reason + " = ?";
    if (claimed) {
      String claim = "SELECT " + String.join(", ", out) + " FROM " + table + (b.alias == null ? "" : " " + b.alias)
          + "\n WHERE " + (closes ? open + " AND " : "") + b.parkedAt + " IS NULL AND (" + b.dueAt + " IS NULL OR "
          + b.dueAt + " <= now())" + (b.where == null ? "" : "\n   AND (" + b.where + ")")
          + "\n ORDER BY " + (b.orderBy == null ? b.dueAt : b.orderBy) + " LIMIT " + LIMIT + " FOR UPDATE"
          + (b.alias == null ? "" : " OF " + b.alias) + " SKIP LOCKED";
      sql.put(Move.CLAIM_NEXT, claim.replace(LIMIT, "1"));
      sql.put(Move.CLAIM_DUE, claim.replace(LIMIT, "?"));
      sql.put(Move.RETRY_LATER, "UPDATE " + table + " SET " + counted + ", " + due + "\n WHERE " + byKey);
      sql.put(Move.RETRY_OR_PARK, "UPDATE " + table + " SET " + counted + ", " + due + ",\n    " + b.parkedAt
          + " = CASE WHEN " + b.attempts + " + 1 >= ? THEN now() END\n WHERE " + byKey);
      sql.put(Move.PARK, "UPDATE " + table + " SET " + counted + ", " + b.parkedAt + " = now()\n WHERE " + byKey);
      sql.put(Move.POSTPONE, "UPDATE " + table + " SET " + b.reason + " = ?, " + due + "\n WHERE " + byKey);
    } else {
      sql.put(Move.LEASE, "UPDATE " + table + " SET " + b.dueAt + " = now() + make_interval(secs => ?)\n"
          + " WHERE (" + keys + ") = (SELECT " + keys + " FROM " + table + "\n"
          + "   WHERE " + open + " AND " + b.attempts + " < ? AND " + b.dueAt + " <= now()\n"
          + "   ORDER BY " + b.dueAt + " LIMIT 1 FOR UPDATE SKIP LOCKED)\n"
          + " RETURNING " + String.join(", ", out));
      sql.put(Move.RETRY_LATER, "UPDATE " + table + " SET " + counted + ", " + due + "\n WHERE " + byKey + " AND "
          + open);
    }
    if (closes) {
      sql.put(Move.COMPLETE, "UPDATE " + table + " SET " + b.completion + "\n WHERE " + byKey + " AND " + open);
      if (key.size() == 1) {
        sql.put(Move.COMPLETE_ALL, "UPDATE " + table + " SET " + b.completion + "\n WHERE " + key.get(0)
            + " = ANY (?) AND " + open);
      }
    }
  }

  /** A builder for the rows of {@code table}. */
  public static Builder builder(String table) {
    return new Builder(name("table", table));
  }

  /**
   * A leased or claimed row: its key values, then the {@link Builder#returning} values, in order (as JDBC's
   * {@code getObject} reads them), and its failed attempts.
   */
  public record Leased(List<Object> key, List<Object> values, int attempts) {
  }

  /**
   * Leases the oldest due, open row with fewer than {@code maxAttempts} attempts: it is due again after
   * {@code lease} (so that no other instance takes it meanwhile); null when none is due. A leased lifecycle only.
   */
  public Leased lease(Connection c, Duration lease, int maxAttempts) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(statement(Move.LEASE))) {
      ps.setDouble(1, seconds(lease));
      ps.setInt(2, maxAttempts);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? row(rs) : null;
      }
    }
  }

  /**
   * Claims (locks until the caller's transaction ends) the first open, unparked, due row in the claim order that
   * no other transaction holds and that meets {@link Builder#claimWhere}, whose {@code ?} take {@code params};
   * null when there is none. A claimed lifecycle only.
   */
  public Leased claimNext(Connection c, Object... params) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(statement(Move.CLAIM_NEXT))) {
      bind(ps, 1, Arrays.asList(params));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? row(rs) : null;
      }
    }
  }

  /** As {@link #claimNext}, up to {@code limit} rows, in the claim order. */
  public List<Leased> claimDue(Connection c, int limit, Object... params) throws SQLException {
    List<Leased> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(statement(Move.CLAIM_DUE))) {
      bind(ps, 1, Arrays.asList(params));
      ps.setInt(params.length + 1, limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(row(rs));
        }
      }
    }
    return rows;
  }

  /**
   * Counts a failed attempt of row {@code key} with {@code reason}; due again in {@code delay}. On a leased
   * lifecycle the row must be open; false when no row was changed.
   */
  public boolean retryLater(Connection c, List<?> key, String reason, Duration delay) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(statement(Move.RETRY_LATER))) {
      ps.setString(1, reason);
      ps.setDouble(2, seconds(delay));
      return bindKey(ps, 3, key).executeUpdate() == 1;
    }
  }

  /**
   * Counts a failed attempt of claimed row {@code key} with {@code reason}, due again in {@code delay}, and parks
   * it when this was attempt {@code maxAttempts} or later (the count as the row holds it). False when no row was
   * changed.
   */
  public boolean retryOrPark(Connection c, List<?> key, String reason, Duration delay, int maxAttempts)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(statement(Move.RETRY_OR_PARK))) {
      ps.setString(1, reason);
      ps.setDouble(2, seconds(delay));
      ps.setInt(3, maxAttempts);
      return bindKey(ps, 4, key).executeUpdate() == 1;
    }
  }

  /** Counts a failed attempt of claimed row {@code key} with {@code reason} and parks it (its due time stays). */
  public boolean park(Connection c, List<?> key, String reason) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(statement(Move.PARK))) {
      ps.setString(1, reason);
      return bindKey(ps, 2, key).executeUpdate() == 1;
    }
  }

  /** Makes claimed row {@code key} due again in {@code delay} with {@code reason}, no attempt counted. */
  public boolean postpone(Connection c, List<?> key, String reason, Duration delay) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(statement(Move.POSTPONE))) {
      ps.setString(1, reason);
      ps.setDouble(2, seconds(delay));
      return bindKey(ps, 3, key).executeUpdate() == 1;
    }
  }

  /** Completes the open row {@code key}; false when it was not open (completed before, or gone). */
  public boolean complete(Connection c, List<?> key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(statement(Move.COMPLETE))) {
      return bindKey(ps, 1, key).executeUpdate() == 1;
    }
  }

  /**
   * Completes the open rows among {@code keys} (a one-column key, of SQL type {@code sqlType}, e.g.
   * {@code bigint}) in one statement; how many were open. No statement when {@code keys} is empty.
   */
  public int completeAll(Connection c, String sqlType, Collection<?> keys) throws SQLException {
    String complete = statement(Move.COMPLETE_ALL);
    if (keys.isEmpty()) {
      return 0;
    }
    try (PreparedStatement ps = c.prepareStatement(complete)) {
      ps.setArray(1, c.createArrayOf(sqlType, keys.toArray()));
      return ps.executeUpdate();
    }
  }

  /**
   * The statement of {@code move}, for tests and logs.
   *
   * @throws IllegalStateException when this lifecycle has no such move (a lease on a claimed lifecycle, a claim on
   *     a leased one, a completion without an open predicate, a batch completion on a key of many columns)
   */
  public String statement(Move move) {
    String s = sql.get(move);
    if (s == null) {
      throw new IllegalStateException("The " + (claimed ? "claimed" : "leased") + " row lifecycle of " + table
          + " (key " + key + (closes ? "" : ", no open predicate") + ") has no move " + move);
    }
    return s;
  }

  /** The leased lifecycle's statements: lease, retry later, complete. */
  List<String> statements() {
    return List.of(statement(Move.LEASE), statement(Move.RETRY_LATER), statement(Move.COMPLETE));
  }

  private Leased row(ResultSet rs) throws SQLException {
    List<Object> k = new ArrayList<>();
    for (int i = 1; i <= key.size(); i++) {
      k.add(rs.getObject(i));
    }
    List<Object> v = new ArrayList<>();
    for (int i = key.size() + 1; i <= key.size() + returning.size(); i++) {
      v.add(rs.getObject(i));
    }
    return new Leased(k, v, rs.getInt(key.size() + returning.size() + 1));
  }

  private PreparedStatement bindKey(PreparedStatement ps, int from, List<?> values) throws SQLException {
    Require.that(values.size() == key.size(), "key", "have " + key.size() + " values " + key, values);
    return bind(ps, from, values);
  }

  private static PreparedStatement bind(PreparedStatement ps, int from, List<?> values) throws SQLException {
    for (int i = 0; i < values.size(); i++) {
      ps.setObject(from + i, values.get(i));
    }
    return ps;
  }

  private static double seconds(Duration d) {
    return d.toNanos() / 1e9;
  }

  private static String name(String what, String name) {
    Require.that(name != null && NAME.matcher(name).matches(), "rowLifecycle." + what, "match " + NAME, name);
    return name;
  }

  /**
   * Names the columns of the lifecycle: the key, attempts, due time and reason always; the open predicate unless
   * the lifecycle is claimed; the rest optionally. Not thread-safe.
   */
  public static final class Builder {

    private final String table;
    private final List<String> key = new ArrayList<>();
    private final List<String> returning = new ArrayList<>();
    private String attempts;
    private String dueAt;
    private String reason;
    private String open;
    private String completion;
    private String parkedAt;
    private String alias;
    private String orderBy;
    private String where;

    private Builder(String table) {
      this.table = table;
    }

    /** The columns that identify a row, e.g. {@code kind, item_id}. */
    public Builder key(String... columns) {
      for (String column : columns) {
        key.add(name("key", column));
      }
      return this;
    }

    /** More columns a lease or claim returns, after the key. */
    public Builder returning(String... columns) {
      for (String column : columns) {
        returning.add(name("returning", column));
      }
      return this;
    }

    /** The count of failed attempts (an integer column). */
    public Builder attempts(String column) {
      this.attempts = name("attempts", column);
      return this;
    }

    /** When the row is due (a timestamp column). */
    public Builder dueAt(String column) {
      this.dueAt = name("dueAt", column);
      return this;
    }

    /** Where a failed attempt's reason goes (a text column). */
    public Builder reason(String column) {
      this.reason = name("reason", column);
      return this;
    }

    /**
     * What an open row is ({@code delivered_at IS NULL}) and what completing sets ({@code delivered_at = now()}):
     * SQL written in the caller's code, never from input.
     */
    public Builder openUntil(String openPredicate, String completion) {
      this.open = Objects.requireNonNull(openPredicate, "openPredicate");
      this.completion = Objects.requireNonNull(completion, "completion");
      return this;
    }

    /**
     * The column that parks a row (a timestamp, null while the row is not parked): the lifecycle is then claimed
     * rather than leased (see {@link RowLifecycle}).
     */
    public Builder parkedAt(String column) {
      this.parkedAt = name("parkedAt", column);
      return this;
    }

    /** The order claims take rows in; default: the due time. */
    public Builder claimOrder(String column) {
      this.orderBy = name("claimOrder", column);
      return this;
    }

    /**
     * More conditions a claimed row must meet, SQL written in the caller's code; its {@code ?} take the claim's
     * parameters. Default: none.
     */
    public Builder claimWhere(String predicate) {
      this.where = Objects.requireNonNull(predicate, "predicate");
      return this;
    }

    /**
     * The table's alias in a claim, for {@link #claimWhere} sub-queries that name the claimed row; the claim then
     * locks only that table's rows ({@code FOR UPDATE OF alias}). Default: none.
     */
    public Builder claimAlias(String alias) {
      this.alias = name("claimAlias", alias);
      return this;
    }

    /** The lifecycle; fails naming the first missing or misplaced part. */
    public RowLifecycle build() {
      Require.that(!key.isEmpty(), "rowLifecycle.key", "name at least one column", key);
      Require.present("rowLifecycle.attempts", attempts);
      Require.present("rowLifecycle.dueAt", dueAt);
      Require.present("rowLifecycle.reason", reason);
      if (parkedAt == null || open != null) {
        Require.that(open != null && !open.isBlank(), "rowLifecycle.open", "not be blank", open);
        Require.that(completion != null && !completion.isBlank(), "rowLifecycle.completion", "not be blank",
            completion);
      }
      if (parkedAt == null) {
        Require.that(orderBy == null && where == null && alias == null, "rowLifecycle.parkedAt",
            "be named for a claim's order, conditions or alias (a leased lifecycle has none)", null);
      }
      if (where != null) {
        Require.that(!where.isBlank(), "rowLifecycle.claimWhere", "not be blank", where);
      }
      return new RowLifecycle(this);
    }
  }
}
