package io.converge.core.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The life of a row that waits for work in a table: lease the oldest due row (one at a time, {@code FOR UPDATE SKIP
 * LOCKED}, so that instances never take the same row), retry it later with its attempt counted and its reason, or
 * complete it once (a conditional update on the open predicate). A row past the attempts is parked: it is never
 * leased again. The SQL is generated once, at {@link Builder#build()}, from column names checked against
 * {@code [a-z_][a-z0-9_]*} (no text of a caller reaches the statements but the predicates it wrote in code).
 * Statements run on the caller's connection, in its transaction. Immutable and thread-safe.
 *
 * <p>Used by the console's stuck webhook ({@code converge_stuck_notified}); the outbox, dead letters and Pulsar
 * recovery have the same moves on their tables.
 */
public final class RowLifecycle {

  private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]*");

  private final List<String> key;
  private final List<String> returning;
  private final String lease;
  private final String retryLater;
  private final String complete;

  private RowLifecycle(Builder b) {
    this.key = List.copyOf(b.key);
    this.returning = List.copyOf(b.returning);
    String keys = String.join(", ", key);
    String byKey = "(" + keys + ") = (" + "?, ".repeat(key.size() - 1) + "?)";
    List<String> out = new ArrayList<>(key);
    out.addAll(returning);
    out.add(b.attempts);
    this.lease = "UPDATE " + b.table + " SET " + b.dueAt + " = now() + make_interval(secs => ?)\n"
        + " WHERE (" + keys + ") = (SELECT " + keys + " FROM " + b.table + "\n"
        + "   WHERE " + b.open + " AND " + b.attempts + " < ? AND " + b.dueAt + " <= now()\n"
        + "   ORDER BY " + b.dueAt + " LIMIT 1 FOR UPDATE SKIP LOCKED)\n"
        + " RETURNING " + String.join(", ", out);
    this.retryLater = "UPDATE " + b.table + " SET " + b.attempts + " = " + b.attempts + " + 1, " + b.reason + " = ?, "
        + b.dueAt + " = now() + make_interval(secs => ?)\n WHERE " + byKey + " AND " + b.open;
    this.complete = "UPDATE " + b.table + " SET " + b.completion + "\n WHERE " + byKey + " AND " + b.open;
  }

  /** A builder for the rows of {@code table}. */
  public static Builder builder(String table) {
    return new Builder(name("table", table));
  }

  /** A leased row: its key values, then the {@link Builder#returning} values, in order, and its failed attempts. */
  public record Leased(List<Object> key, List<Object> values, int attempts) {
  }

  /**
   * Leases the oldest due, open row with fewer than {@code maxAttempts} attempts: it is due again after
   * {@code lease} (so that no other instance takes it meanwhile); null when none is due.
   */
  public Leased lease(Connection c, Duration lease, int maxAttempts) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(this.lease)) {
      ps.setDouble(1, seconds(lease));
      ps.setInt(2, maxAttempts);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
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
    }
  }

  /** Counts a failed attempt of the open row {@code key} with {@code reason}; due again in {@code delay}. */
  public boolean retryLater(Connection c, List<?> key, String reason, Duration delay) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(retryLater)) {
      ps.setString(1, reason);
      ps.setDouble(2, seconds(delay));
      return bindKey(ps, 3, key).executeUpdate() == 1;
    }
  }

  /** Completes the open row {@code key}; false when it was not open (completed before, or gone). */
  public boolean complete(Connection c, List<?> key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(complete)) {
      return bindKey(ps, 1, key).executeUpdate() == 1;
    }
  }

  /** The statements, for tests and logs. */
  List<String> statements() {
    return List.of(lease, retryLater, complete);
  }

  private PreparedStatement bindKey(PreparedStatement ps, int from, List<?> values) throws SQLException {
    Require.that(values.size() == key.size(), "key", "have " + key.size() + " values " + key, values);
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

  /** Names the columns of the lifecycle; every one is required but {@link #returning}. Not thread-safe. */
  public static final class Builder {

    private final String table;
    private final List<String> key = new ArrayList<>();
    private final List<String> returning = new ArrayList<>();
    private String attempts;
    private String dueAt;
    private String reason;
    private String open;
    private String completion;

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

    /** More columns a lease returns, after the key. */
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

    /** The lifecycle; fails naming the first missing part. */
    public RowLifecycle build() {
      Require.that(!key.isEmpty(), "rowLifecycle.key", "name at least one column", key);
      Require.present("rowLifecycle.attempts", attempts);
      Require.present("rowLifecycle.dueAt", dueAt);
      Require.present("rowLifecycle.reason", reason);
      Require.that(open != null && !open.isBlank(), "rowLifecycle.open", "not be blank", open);
      Require.that(completion != null && !completion.isBlank(), "rowLifecycle.completion", "not be blank",
          completion);
      return new RowLifecycle(this);
    }
  }
}
