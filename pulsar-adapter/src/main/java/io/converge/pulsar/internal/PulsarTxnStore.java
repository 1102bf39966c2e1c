package io.converge.pulsar.internal;

import io.converge.producer.spi.CommitWrite;
import io.converge.core.internal.PipelinedCommit;
import io.converge.core.internal.RowLifecycle;
import io.converge.producer.internal.TxnLog;
import java.sql.Array;
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
import javax.sql.DataSource;

/** The tables {@code converge_pulsar_txn} and {@code converge_pulsar_txn_message}. Stateless; thread-safe. */
final class PulsarTxnStore {

  /**
   * The deadline is written on the database's clock, the one every instance's recovery compares it with:
   * the time left by the writer's clock, from the database's {@code now()} (the start of the unit's
   * transaction, no later than the writer measured the time left: the stored deadline is never later than
   * the broker's). A writer or a recovering instance whose clock is off cannot move it.
   */
  private static final String INSERT_TXN = """
      INSERT INTO converge_pulsar_txn (txn_most, txn_least, producer_group, deadline)
      VALUES (?, ?, ?, now() + ? * interval '1 millisecond')
      """;
  /** {@code seq}: the message's place in its unit's publish order, which recovery re-publishes in. */
  private static final String INSERT_MESSAGE = """
      INSERT INTO converge_pulsar_txn_message (message_id, txn_most, txn_least, topic, msg_key, properties, payload, seq)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      """;
  private static final String DELETE_TXN = "DELETE FROM converge_pulsar_txn WHERE txn_most = ? AND txn_least = ?";
  /** Followed by the ids as {@code (most, least)} literals: {@link #confirmAll}. */
  private static final String DELETE_TXNS = """
      DELETE FROM converge_pulsar_txn t USING (VALUES %s) AS d(most, least)
      WHERE t.txn_most = d.most AND t.txn_least = d.least""";
  /**
   * Recovery's row lifecycle, claimed: the oldest transaction of a group logged more than a grace ago, unparked and
   * due (never retried: no due time), locked until the claiming connection commits, so another instance's scan
   * skips it instead of re-publishing it too; a failed attempt is counted and retried later, or parks the
   * transaction. Confirming one deletes its row ({@link #confirm}), so the lifecycle has no open predicate.
   */
  static final RowLifecycle LIFECYCLE = RowLifecycle.builder("converge_pulsar_txn").key("txn_most", "txn_least")
      .returning("deadline").attempts("attempts").dueAt("next_attempt_at").reason("reason").parkedAt("parked_at")
      .claimOrder("created_at").claimWhere("producer_group = ? AND created_at < now() - make_interval(secs => ?)")
      .build();
  /** In publish order; rows logged before {@code seq} existed (all 0) fall back to the id order they had. */
  private static final String MESSAGES = """
      SELECT message_id, topic, msg_key, properties, payload FROM converge_pulsar_txn_message
      WHERE txn_most = ? AND txn_least = ? ORDER BY seq, message_id
      """;
  /**
   * Whether the database's clock, read now (not the claim's transaction start: the broker was asked
   * after it), is still at least a margin before the transaction's deadline.
   */
  private static final String BEFORE_DEADLINE = """
      SELECT clock_timestamp() < deadline - make_interval(secs => ?) FROM converge_pulsar_txn
      WHERE txn_most = ? AND txn_least = ?
      """;

  private static final String STATS = """
      SELECT count(*) FILTER (WHERE parked_at IS NULL),
             COALESCE(EXTRACT(EPOCH FROM now() - min(created_at) FILTER (WHERE parked_at IS NULL)), 0),
             count(*) FILTER (WHERE parked_at IS NOT NULL)
      FROM converge_pulsar_txn WHERE producer_group = ?
      """;

  /** A logged transaction not yet confirmed, and how many recovery attempts failed so far. */
  record OpenTxn(long most, long least, Instant deadline, int attempts) {
  }

  /** A logged message. */
  record Logged(String id, String topic, String key, Map<String, String> properties, byte[] payload) {
  }

  /** The most messages whose rows go with the commit in one statement list. */
  static final int MAX_PIPELINED = 200;

  private final DataSource dataSource;

  PulsarTxnStore(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Logs a transaction whose deadline is {@code remaining} from now (by the database's clock). */
  static void insertTxn(Connection c, long most, long least, String group, Duration remaining) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT_TXN)) {
      ps.setLong(1, most);
      ps.setLong(2, least);
      ps.setString(3, group);
      ps.setLong(4, remaining.toMillis());
      ps.executeUpdate();
    }
  }

  static void insertMessage(Connection c, long most, long least, Logged m) throws SQLException {
    insertMessages(c, most, least, List.of(m));
  }

  /** Logs the messages of one transaction in one JDBC batch. */
  static void insertMessages(Connection c, long most, long least, List<Logged> messages) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT_MESSAGE)) {
      int seq = 0;
      for (Logged m : messages) {
        Array props = properties(c, m);
        ps.setString(1, m.id());
        ps.setLong(2, most);
        ps.setLong(3, least);
        ps.setString(4, m.topic());
        ps.setString(5, m.key());
        ps.setArray(6, props);
        ps.setBytes(7, m.payload());
        ps.setInt(8, seq++);
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  /**
   * The log of one unit's transaction as one {@link CommitWrite}: its {@code converge_pulsar_txn} row, its
   * messages' rows and their {@code converge_txn_log} rows (a fenced id fails it), in one round trip with
   * the DB commit where the driver allows ({@link PipelinedCommit}); more than
   * {@value #MAX_PIPELINED} messages take a JDBC batch of their own first. The time left before
   * {@code deadline} is measured on {@code clock} when the write runs, and stored from the database's clock.
   */
  static CommitWrite logWrite(long most, long least, String group, Instant deadline, Clock clock,
      List<Logged> messages, TxnLog log) {
    List<String> ids = new ArrayList<>(messages.size());
    List<String> topics = new ArrayList<>(messages.size());
    for (Logged m : messages) {
      ids.add(m.id());
      topics.add(m.topic());
    }
    return new CommitWrite() {

      @Override
      public void write(Connection c) throws SQLException {
        insertTxn(c, most, least, group, Duration.between(clock.instant(), deadline));
        insertMessages(c, most, least, messages);
        log.recordCommitted(c, ids, group, topics);
      }

      @Override
      public void writeAndCommit(Connection c) throws SQLException {
        if (!PipelinedCommit.supported(c) || messages.size() > MAX_PIPELINED) {
          write(c);
          c.commit();
          return;
        }
        StringBuilder sql = new StringBuilder(INSERT_TXN.strip()).append(";\n")
            .append(INSERT_MESSAGE.strip());
        for (int i = 1; i < messages.size(); i++) {
          sql.append(", (?, ?, ?, ?, ?, ?, ?, ?)");
        }
        sql.append(";\n").append(TxnLog.recordAllStatement().strip());
        try (PreparedStatement ps = c.prepareStatement(PipelinedCommit.withCommit(sql.toString()))) {
          int i = 1;
          ps.setLong(i++, most);
          ps.setLong(i++, least);
          ps.setString(i++, group);
          ps.setLong(i++, Duration.between(clock.instant(), deadline).toMillis());
          int seq = 0;
          for (Logged m : messages) {
            ps.setString(i++, m.id());
            ps.setLong(i++, most);
            ps.setLong(i++, least);
            ps.setString(i++, m.topic());
            ps.setString(i++, m.key());
            ps.setArray(i++, properties(c, m));
            ps.setBytes(i++, m.payload());
            ps.setInt(i++, seq++);
          }
          ps.setString(i++, group);
          ps.setArray(i++, c.createArrayOf("text", ids.toArray()));
          ps.setArray(i, c.createArrayOf("text", topics.toArray()));
          ps.execute();
        } catch (SQLException e) {
          throw TxnLog.fencedAll(e, ids, group);
        }
        PipelinedCommit.committed(c);
      }
    };
  }

  private static Array properties(Connection c, Logged m) throws SQLException {
    List<String> flat = new ArrayList<>();
    m.properties().forEach((k, v) -> {
      flat.add(k);
      flat.add(v);
    });
    return c.createArrayOf("text", flat.toArray());
  }

  /** Deletes the row of a confirmed transaction (its messages cascade) on {@code c}. */
  static void confirm(Connection c, long most, long least) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DELETE_TXN)) {
      ps.setLong(1, most);
      ps.setLong(2, least);
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
   * Deletes the rows of confirmed transactions {@code (most[i], least[i])} in one statement. Its ids are
   * literals, not parameters, so that the server plans each batch for the table as it is: a prepared plan
   * cached while the table was small scans the whole table (and its deleted rows not yet vacuumed) for every
   * batch, at a cost that grows with the rows left unconfirmed (a backlog after an outage, parked transactions).
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
      s.executeUpdate(DELETE_TXNS.formatted(ids));
    }
  }

  /**
   * Claims, on {@code c} (in a transaction), the oldest unparked transaction of {@code group} logged
   * more than {@code grace} ago whose next attempt is due, skipping those another instance holds; null
   * when there is none.
   */
  static OpenTxn claim(Connection c, String group, Duration grace) throws SQLException {
    RowLifecycle.Leased t = LIFECYCLE.claimNext(c, group, grace.toMillis() / 1000.0);
    return t == null ? null
        : new OpenTxn((Long) t.key().get(0), (Long) t.key().get(1),
            ((Timestamp) t.values().get(0)).toInstant(), t.attempts());
  }

  /**
   * Whether the database's clock is still more than {@code margin} before the deadline of {@code t}: a
   * NOT_FOUND answer then means committed (only a timeout aborts after the DB commit).
   */
  static boolean beforeDeadline(Connection c, OpenTxn t, Duration margin) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BEFORE_DEADLINE)) {
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
    LIFECYCLE.retryLater(c, List.of(t.most(), t.least()), reason, delay);
  }

  /**
   * Counts the failed attempt of the claimed transaction {@code t} and parks it: recovery leaves it (and its
   * messages) until an operator resumes it.
   */
  static void park(Connection c, OpenTxn t, String reason) throws SQLException {
    LIFECYCLE.park(c, List.of(t.most(), t.least()), reason);
  }

  /** {unparked unconfirmed transactions of {@code group}, age in seconds of the oldest of them, parked ones}. */
  double[] stats(String group) throws SQLException {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(STATS)) {
      ps.setString(1, group);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new double[]{rs.getLong(1), rs.getDouble(2), rs.getLong(3)};
      }
    }
  }

  /** The logged messages of transaction {@code (most, least)}, read on {@code c}. */
  static List<Logged> messages(Connection c, long most, long least) throws SQLException {
    List<Logged> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(MESSAGES)) {
      ps.setLong(1, most);
      ps.setLong(2, least);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String[] flat = (String[]) rs.getArray(4).getArray();
          Map<String, String> props = new LinkedHashMap<>();
          for (int i = 0; i + 1 < flat.length; i += 2) {
            props.put(flat[i], flat[i + 1]);
          }
          out.add(new Logged(rs.getString(1), rs.getString(2), rs.getString(3), props, rs.getBytes(5)));
        }
      }
    }
    return out;
  }
}
