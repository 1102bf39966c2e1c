package io.converge.pulsar.internal;

import io.converge.core.internal.PipelinedCommit;
import io.converge.core.internal.RowLifecycle;
import io.converge.producer.spi.CommitWrite;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The log of the Pulsar backend: a unit's transaction and its messages in one row of {@code converge_pulsar_unit}
 * (pulsar migration V4), and the rows of {@code converge_pulsar_txn} / {@code converge_pulsar_txn_message} an
 * earlier version logged, which recovery still resolves ({@link LogLayout}). Stateless; thread-safe.
 */
final class PulsarTxnStore {

  /**
   * The whole unit in one row. The deadline is written on the database's clock, the one every instance's recovery
   * compares it with: the time left by the writer's clock, from the database's {@code now()} (the start of the unit's
   * transaction, no later than the writer measured the time left: the stored deadline is never later than the
   * broker's). A writer or a recovering instance whose clock is off cannot move it. The arrays hold the messages in
   * publish order, which recovery re-publishes in; {@code properties}: each message's name, value pairs, then NULL.
   */
  private static final String INSERT_UNIT = """
      INSERT INTO converge_pulsar_unit (txn_most, txn_least, producer_group, deadline, message_ids, topics, msg_keys,
                                        properties, payloads)
      VALUES (?, ?, ?, now() + ? * interval '1 millisecond', ?, ?, ?, ?, ?)
      """;

  /** {@link #INSERT_UNIT} followed by the COMMIT, sent together; built once, not per unit. */
  private static final String INSERT_UNIT_AND_COMMIT = PipelinedCommit.withCommit(INSERT_UNIT);

  /** Followed by the ids as {@code (most, least)} literals: {@link #confirmAll}. */
  private static final String DELETE_UNITS = """
      DELETE FROM converge_pulsar_unit t USING (VALUES %s) AS d(most, least)
      WHERE t.txn_most = d.most AND t.txn_least = d.least""";

  private static final String STATS = """
      SELECT count(*) FILTER (WHERE parked_at IS NULL),
             COALESCE(EXTRACT(EPOCH FROM now() - min(created_at) FILTER (WHERE parked_at IS NULL)), 0),
             count(*) FILTER (WHERE parked_at IS NOT NULL)
      FROM (SELECT created_at, parked_at FROM converge_pulsar_unit WHERE producer_group = ?
            UNION ALL
            SELECT created_at, parked_at FROM converge_pulsar_txn WHERE producer_group = ?) AS logged
      """;

  /** A logged transaction not yet confirmed, where it is logged, and how many recovery attempts failed so far. */
  record OpenTxn(LogLayout layout, long most, long least, Instant deadline, int attempts) {

    List<Long> key() {
      return List.of(most, least);
    }
  }

  /** A logged message. */
  record Logged(String id, String topic, String key, Map<String, String> properties, byte[] payload) {
  }

  private final DataSource dataSource;

  PulsarTxnStore(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * The log of one unit's transaction as one {@link CommitWrite}: one row of {@code converge_pulsar_unit} holding
   * its messages, written by one statement that goes with the DB commit in one round trip where the driver allows
   * ({@link PipelinedCommit}). The time left before {@code deadline} is measured on {@code clock} when the write
   * runs, and stored from the database's clock.
   */
  static CommitWrite logWrite(long most, long least, String group, Instant deadline, Clock clock,
      List<Logged> messages) {
    if (messages.isEmpty()) {
      throw new IllegalArgumentException("a logged Pulsar transaction has messages, but (" + most + "," + least
          + ") has none");
    }
    return new CommitWrite() {

      @Override
      public void write(Connection c) throws SQLException {
        insert(c, INSERT_UNIT, most, least, group, Duration.between(clock.instant(), deadline), messages);
      }

      @Override
      public void writeAndCommit(Connection c) throws SQLException {
        if (!PipelinedCommit.supported(c)) {
          write(c);
          c.commit();
          return;
        }
        insert(c, INSERT_UNIT_AND_COMMIT, most, least, group,
            Duration.between(clock.instant(), deadline), messages);
        PipelinedCommit.committed(c);
      }
    };
  }

  private static void insert(Connection c, String sql, long most, long least, String group, Duration remaining,
      List<Logged> messages) throws SQLException {
    int n = messages.size();
    String[] ids = new String[n];
    String[] topics = new String[n];
    String[] keys = new String[n];
    byte[][] payloads = new byte[n][];
    List<String> properties = new ArrayList<>(n * 16);
    for (int i = 0; i < n; i++) {
      Logged m = messages.get(i);
      ids[i] = m.id();
      topics[i] = m.topic();
      keys[i] = m.key();
      payloads[i] = m.payload();
      m.properties().forEach((name, value) -> {
        // a NULL ends a message's list: a property without a name or value (Pulsar refuses it) cannot be stored
        properties.add(Objects.requireNonNull(name, "property name"));
        properties.add(Objects.requireNonNull(value, () -> "the value of property " + name));
      });
      properties.add(null);
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, most);
      ps.setLong(2, least);
      ps.setString(3, group);
      ps.setLong(4, remaining.toMillis());
      ps.setArray(5, c.createArrayOf("text", ids));
      ps.setArray(6, c.createArrayOf("text", topics));
      ps.setArray(7, c.createArrayOf("text", keys));
      ps.setArray(8, c.createArrayOf("text", properties.toArray(new String[0])));
      ps.setArray(9, c.createArrayOf("bytea", payloads));
      ps.execute();
    }
  }

  /** The properties of each message out of {@code converge_pulsar_unit.properties} (name, value, ..., NULL per message). */
  static List<Map<String, String>> properties(String[] flat) {
    List<Map<String, String>> out = new ArrayList<>();
    Map<String, String> current = new LinkedHashMap<>();
    for (int i = 0; i < flat.length; i++) {
      if (flat[i] == null) {
        out.add(current);
        current = new LinkedHashMap<>();
      } else if (i + 1 < flat.length && flat[i + 1] != null) {
        current.put(flat[i], flat[++i]);
      } else {
        throw new IllegalStateException("property " + flat[i] + " has no value");
      }
    }
    return out;
  }

  /** Deletes the row of the confirmed transaction {@code t} on {@code c} (in {@link LogLayout#TXN}, its messages cascade). */
  static void confirm(Connection c, OpenTxn t) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(t.layout().delete)) {
      ps.setLong(1, t.most());
      ps.setLong(2, t.least());
      ps.executeUpdate();
    }
  }

  /** A connection in a transaction of its own, for a claim and what follows it. */
  Connection begin() throws SQLException {
    Connection c = dataSource.getConnection();
    try {
      c.setAutoCommit(false);
      return c;
    } catch (SQLException e) {
      c.close();
      throw e;
    }
  }

  /**
   * Deletes the rows of the confirmed transactions {@code (most[i], least[i])} of units this instance logged (all in
   * {@code converge_pulsar_unit}) in one statement. Its ids are literals, not parameters, so that the server plans
   * each batch for the table as it is: a prepared plan cached while the table was small scans the whole table (and
   * its deleted rows not yet vacuumed) for every batch, at a cost that grows with the rows left unconfirmed (a
   * backlog after an outage, parked transactions).
   */
  void confirmAll(long[] most, long[] least) throws SQLException {
    if (most.length != least.length) {
      throw new IllegalArgumentException("most and least must pair up, but have " + most.length + " and "
          + least.length + " ids");
    }
    if (most.length == 0) {
      return; // nothing to confirm (and "VALUES " alone is no statement)
    }
    StringBuilder ids = new StringBuilder(most.length * 44);
    for (int i = 0; i < most.length; i++) {
      // quoted: a negative literal would be the negation of a positive one, which overflows for Long.MIN_VALUE
      ids.append(i == 0 ? "('" : ", ('").append(most[i]).append("'::bigint, '").append(least[i]).append("'::bigint)");
    }
    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
      c.setAutoCommit(true);
      s.executeUpdate(DELETE_UNITS.formatted(ids));
    }
  }

  /**
   * Claims, on {@code c} (in a transaction), the oldest unparked transaction of {@code group} in {@code layout}
   * logged more than {@code grace} ago whose next attempt is due, skipping those another instance holds; null when
   * there is none.
   */
  static OpenTxn claim(Connection c, LogLayout layout, String group, Duration grace) throws SQLException {
    RowLifecycle.Leased t = layout.lifecycle.claimNext(c, group, grace.toMillis() / 1000.0);
    return t == null ? null
        : new OpenTxn(layout, (Long) t.key().get(0), (Long) t.key().get(1),
            ((Timestamp) t.values().get(0)).toInstant(), t.attempts());
  }

  /**
   * Whether the database's clock is still more than {@code margin} before the deadline of {@code t}: a
   * NOT_FOUND answer then means committed (only a timeout aborts after the DB commit).
   */
  static boolean beforeDeadline(Connection c, OpenTxn t, Duration margin) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(t.layout().beforeDeadline)) {
      ps.setDouble(1, margin.toMillis() / 1000.0);
      ps.setLong(2, t.most());
      ps.setLong(3, t.least());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /**
   * Counts a failed attempt of the claimed transaction {@code t} (the row holds {@code t.attempts()}, locked since
   * its claim): it is due again after {@code delay}.
   */
  static void retryLater(Connection c, OpenTxn t, Duration delay, String reason) throws SQLException {
    t.layout().lifecycle.retryLater(c, t.key(), reason, delay);
  }

  /**
   * Counts the failed attempt of the claimed transaction {@code t} and parks it: recovery leaves it (and its
   * messages) until an operator resumes it.
   */
  static void park(Connection c, OpenTxn t, String reason) throws SQLException {
    t.layout().lifecycle.park(c, t.key(), reason);
  }

  /**
   * {unparked unconfirmed transactions of {@code group}, age in seconds of the oldest of them, parked ones}, in both
   * layouts.
   */
  double[] stats(String group) throws SQLException {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(STATS)) {
      ps.setString(1, group);
      ps.setString(2, group);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new double[]{rs.getLong(1), rs.getDouble(2), rs.getLong(3)};
      }
    }
  }

  /** The logged messages of {@code t} in publish order, read on {@code c}. */
  static List<Logged> messages(Connection c, OpenTxn t) throws SQLException {
    return t.layout().messages(c, t.most(), t.least());
  }
}
