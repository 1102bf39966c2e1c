package io.converge.console.trace;

import io.converge.core.internal.DatabaseErrors;
import io.converge.console.trace.internal.TraceQueries;
import io.converge.console.trace.internal.TraceQueries.Source;
import io.converge.console.internal.Rows;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.internal.Require;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import javax.sql.DataSource;

/**
 * A payment's timeline: for a business id (a {@code StateMachine} entity id, a message key), a message id or an
 * Idempotency-Key, everything Converge recorded about it, in time order: the Idempotency-Key row and its stored
 * response, state transitions ({@code converge_state_transition}), transaction-log rows, RocketMQ ENDs that did not reach the broker and their check-backs
 * ({@code converge_txn_end}) and producer tickets,
 * open Pulsar transactions, outbox rows (written, parked, published), consumers' failed attempts, dead letters,
 * tickets and dedup outcomes, and sagas (converge-saga): every event of the saga ({@code converge_saga_event}: started,
 * each command sent, each reply, timeouts, compensations, set-asides, operators' actions), its participants' stored
 * answers ({@code converge_saga_branch}) and its tickets.
 *
 * <p>The id is widened before the events are read (up to three links away): an entity's transitions name the messages that moved it
 * (and an Idempotency-Key passed as their message id), a message's transitions name its entities, a key names the
 * outbox rows and dead letters of its messages, a saga id names its commands and replies and a command or reply names
 * its saga (so a saga run under the order's id shows its participants' dedup outcomes). A table that does not exist in the schema (a module the
 * application does not use) has no events. What Converge deletes is not shown: a confirmed Pulsar transaction,
 * purged dedup, log and outbox rows, a consumer's attempts once the message reached an outcome; a duplicate
 * delivery leaves no row (its dedup outcome is the first delivery's). Read-only; thread-safe.
 */
public final class Timeline {

  /** The most ids one trace follows (the id and those related to it). */
  public static final int MAX_IDS = 1_000;

  /**
   * How many links the id is followed: message -> entity -> the Idempotency-Key or message of its first
   * transition -> that one's entities.
   */
  static final int HOPS = 3;

  private final DataSource dataSource;

  private Timeline(DataSource dataSource) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  /** The timeline of the Converge tables in {@code dataSource}'s current schema. */
  public static Timeline of(DataSource dataSource) {
    return new Timeline(dataSource);
  }

  /**
   * Everything recorded about {@code id}, oldest first (events of one time in the order of the class comment).
   *
   * @throws IllegalArgumentException when {@code id} is blank
   * @throws DatabaseUnavailableException when the database is unreachable
   *     ({@code io.converge.core.DatabaseRefusedException} when it refuses a statement)
   */
  public List<TimelineEvent> trace(String id) {
    Require.that(id != null && !id.isBlank(), "trace.id", "not be blank", id);
    try (Connection c = dataSource.getConnection()) {
      Set<String> ids = related(c, id.trim());
      List<TimelineEvent> events = new ArrayList<>();
      for (Source source : TraceQueries.EVENTS) {
        if (Rows.exists(c, source.table())) {
          events.addAll(query(c, source, ids));
        }
      }
      events.sort(Comparator.comparing(TimelineEvent::at)); // stable: sources keep their order at one time
      return events;
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not read the timeline of " + id, null, e);
    }
  }

  /** {@code id} and the ids related to it, followed up to {@value #HOPS} links away. */
  private static Set<String> related(Connection c, String id) throws SQLException {
    Set<String> ids = new LinkedHashSet<>();
    ids.add(id);
    Set<String> frontier = Set.of(id);
    List<Source> sources = new ArrayList<>();
    for (Source source : TraceQueries.RELATED) {
      if (Rows.exists(c, source.table())) {
        sources.add(source);
      }
    }
    for (int hop = 0; hop < HOPS && !frontier.isEmpty() && ids.size() < MAX_IDS; hop++) {
      Set<String> next = new LinkedHashSet<>();
      for (Source source : sources) {
        try (PreparedStatement ps = c.prepareStatement(source.sql())) {
          bindIds(c, ps, source, frontier);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next() && ids.size() < MAX_IDS) {
              if (ids.add(rs.getString(1))) {
                next.add(rs.getString(1));
              }
            }
          }
        }
      }
      frontier = next;
    }
    return ids;
  }

  private static List<TimelineEvent> query(Connection c, Source source, Set<String> ids) throws SQLException {
    List<TimelineEvent> events = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(source.sql())) {
      bindIds(c, ps, source, ids);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          events.add(new TimelineEvent(rs.getTimestamp("at").toInstant(), source.table(), rs.getString("subject"),
              rs.getString("what"), Rows.details(rs.getArray("details"), true)));
        }
      }
    }
    return events;
  }

  private static void bindIds(Connection c, PreparedStatement ps, Source source, Set<String> ids)
      throws SQLException {
    Array array = c.createArrayOf("text", ids.toArray());
    for (int i = 1; i <= source.parameters(); i++) {
      ps.setArray(i, array);
    }
  }

}
