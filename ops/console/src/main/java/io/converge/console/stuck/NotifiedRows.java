package io.converge.console.stuck;

import io.converge.core.internal.Json;
import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.RowLifecycle;
import io.converge.console.inspect.StuckItem;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The table {@code converge_stuck_notified} (migration {@code stuck}): one row per item ever notified, recorded
 * once by any instance, leased one at a time for its POST, marked delivered or failed with its next attempt.
 * Every statement runs in auto-commit on a connection of its own. Thread-safe (stateless besides its settings).
 */
final class NotifiedRows {

  private static final String RECORD = """
      INSERT INTO converge_stuck_notified (kind, item_id, payload, next_attempt_at)
      VALUES (?, ?, ?, now())
      ON CONFLICT DO NOTHING""";
  // one row per lease: the lease outlasts its POST, so no other instance takes the row meanwhile; past the
  // attempts a row is never leased again
  private static final RowLifecycle LIFECYCLE = RowLifecycle.builder("converge_stuck_notified")
      .key("kind", "item_id").returning("payload").attempts("attempts").dueAt("next_attempt_at").reason("last_error")
      .openUntil("delivered_at IS NULL", "delivered_at = now(), last_error = NULL").build();

  /** A leased row: what to post, and the failed attempts before this one. */
  record Leased(String kind, String id, String payload, int attempts) {
  }

  private final DataSource dataSource;
  private final URI url;

  /** {@code url}: the webhook's, named in the errors. */
  NotifiedRows(DataSource dataSource, URI url) {
    this.dataSource = dataSource;
    this.url = url;
  }

  /** Records each of {@code items} not recorded before (by any instance); how many were new. */
  int record(List<StuckItem> items) {
    int recorded = 0;
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      try (PreparedStatement ps = c.prepareStatement(RECORD)) {
        for (StuckItem item : items) {
          ps.setString(1, item.kind().slug());
          ps.setString(2, item.id());
          ps.setString(3, json(item));
          recorded += ps.executeUpdate();
        }
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not record the stuck items notified to " + url, null, e);
    }
    return recorded;
  }

  /** Leases the oldest due row for {@code lease}, or null when none is due. */
  Leased leaseOne(Duration lease, int maxAttempts) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      RowLifecycle.Leased row = LIFECYCLE.lease(c, lease, maxAttempts);
      return row == null ? null
          : new Leased((String) row.key().get(0), (String) row.key().get(1), (String) row.values().get(0),
              row.attempts());
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not lease the stuck items to notify to " + url, null, e);
    }
  }

  /** Marks {@code row} delivered. */
  void delivered(Leased row) {
    update(row, c -> LIFECYCLE.complete(c, List.of(row.kind(), row.id())));
  }

  /** Counts a failed attempt of {@code row} and makes it due again in {@code delay}. */
  void failed(Leased row, String error, Duration delay) {
    update(row, c -> LIFECYCLE.retryLater(c, List.of(row.kind(), row.id()), error, delay));
  }

  /** One statement on the row. */
  private interface RowUpdate {

    void run(Connection c) throws SQLException;
  }

  private void update(Leased row, RowUpdate update) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      update.run(c);
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not record the notification of stuck " + row.kind() + " "
          + row.id() + " to " + url, null, e);
    }
  }

  /** The JSON object posted for {@code item}. */
  static String json(StuckItem item) {
    StringBuilder b = new StringBuilder("{");
    field(b, "kind", item.kind().slug()).append(',');
    field(b, "id", item.id()).append(',');
    field(b, "key", item.key()).append(',');
    field(b, "tenant", item.tenant()).append(',');
    field(b, "topic", item.topic()).append(',');
    field(b, "since", item.since().toString()).append(',');
    b.append("\"ageSeconds\":").append(item.age().toSeconds()).append(',');
    field(b, "reason", item.reason()).append(",\"details\":{");
    boolean first = true;
    for (Map.Entry<String, String> e : item.details().entrySet()) {
      if (!first) {
        b.append(',');
      }
      first = false;
      field(b, e.getKey(), e.getValue());
    }
    return b.append("}}").toString();
  }

  private static StringBuilder field(StringBuilder b, String name, String value) {
    Json.quote(b, name).append(':');
    return value == null ? b.append("null") : Json.quote(b, value);
  }
}
