package io.converge.pulsar.internal;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/** The tables {@code converge_pulsar_txn} and {@code converge_pulsar_txn_message}. Stateless; thread-safe. */
final class PulsarTxnStore {

  private static final String INSERT_TXN = """
      INSERT INTO converge_pulsar_txn (txn_most, txn_least, producer_group, deadline) VALUES (?, ?, ?, ?)
      """;
  private static final String INSERT_MESSAGE = """
      INSERT INTO converge_pulsar_txn_message (message_id, txn_most, txn_least, topic, msg_key, properties, payload)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      """;
  private static final String DELETE_TXN = "DELETE FROM converge_pulsar_txn WHERE txn_most = ? AND txn_least = ?";
  private static final String DELETE_TXNS = """
      DELETE FROM converge_pulsar_txn
      WHERE (txn_most, txn_least) IN (SELECT * FROM unnest(?::bigint[], ?::bigint[]))""";
  private static final String OPEN = """
      SELECT txn_most, txn_least, deadline FROM converge_pulsar_txn
      WHERE producer_group = ? AND created_at < now() - make_interval(secs => ?)
      ORDER BY created_at LIMIT 100
      """;
  private static final String MESSAGES = """
      SELECT message_id, topic, msg_key, properties, payload FROM converge_pulsar_txn_message
      WHERE txn_most = ? AND txn_least = ? ORDER BY message_id
      """;

  private static final String STATS = """
      SELECT count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)
      FROM converge_pulsar_txn WHERE producer_group = ?
      """;

  /** A logged transaction not yet confirmed. */
  record OpenTxn(long most, long least, Instant deadline) {}

  /** A logged message. */
  record Logged(String id, String topic, String key, Map<String, String> properties, byte[] payload) {}

  private final DataSource dataSource;

  PulsarTxnStore(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  static void insertTxn(Connection c, long most, long least, String group, Instant deadline) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT_TXN)) {
      ps.setLong(1, most);
      ps.setLong(2, least);
      ps.setString(3, group);
      ps.setTimestamp(4, Timestamp.from(deadline));
      ps.executeUpdate();
    }
  }

  static void insertMessage(Connection c, long most, long least, Logged m) throws SQLException {
    List<String> flat = new ArrayList<>();
    m.properties().forEach((k, v) -> {
      flat.add(k);
      flat.add(v);
    });
    Array props = c.createArrayOf("text", flat.toArray());
    try (PreparedStatement ps = c.prepareStatement(INSERT_MESSAGE)) {
      ps.setString(1, m.id());
      ps.setLong(2, most);
      ps.setLong(3, least);
      ps.setString(4, m.topic());
      ps.setString(5, m.key());
      ps.setArray(6, props);
      ps.setBytes(7, m.payload());
      ps.executeUpdate();
    }
  }

  /** Deletes the row of a confirmed transaction (its messages cascade). */
  void confirm(long most, long least) throws SQLException {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(DELETE_TXN)) {
      c.setAutoCommit(true);
      ps.setLong(1, most);
      ps.setLong(2, least);
      ps.executeUpdate();
    }
  }

  /** Deletes the rows of confirmed transactions {@code (most[i], least[i])} in one statement. */
  void confirmAll(Long[] most, Long[] least) throws SQLException {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(DELETE_TXNS)) {
      c.setAutoCommit(true);
      ps.setArray(1, c.createArrayOf("bigint", most));
      ps.setArray(2, c.createArrayOf("bigint", least));
      ps.executeUpdate();
    }
  }

  /** The transactions of {@code group} logged more than {@code grace} ago and not confirmed, oldest first. */
  List<OpenTxn> open(String group, Duration grace) throws SQLException {
    List<OpenTxn> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(OPEN)) {
      ps.setString(1, group);
      ps.setDouble(2, grace.toMillis() / 1000.0);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new OpenTxn(rs.getLong(1), rs.getLong(2), rs.getTimestamp(3).toInstant()));
        }
      }
    }
    return out;
  }

  /** {count of unconfirmed transactions of {@code group}, age in seconds of the oldest}. */
  double[] stats(String group) throws SQLException {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(STATS)) {
      ps.setString(1, group);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new double[] {rs.getLong(1), rs.getDouble(2)};
      }
    }
  }

  List<Logged> messages(long most, long least) throws SQLException {
    List<Logged> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(MESSAGES)) {
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
