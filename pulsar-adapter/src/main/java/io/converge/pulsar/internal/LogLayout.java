package io.converge.pulsar.internal;

import io.converge.core.internal.RowLifecycle;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a logged Pulsar transaction is, and how recovery reads, moves and deletes it there. {@link #UNIT}: one row of
 * {@code converge_pulsar_unit} holding the messages (pulsar migration V4), where every unit of this version is logged.
 * {@link #TXN}: a {@code converge_pulsar_txn} row and its {@code converge_pulsar_txn_message} rows, as versions before
 * V4 logged a unit; never written any more, still recovered, parked, resumed and deleted, so that what an instance
 * of an earlier version left is drained. Immutable.
 */
enum LogLayout {

  /** One row per unit, the messages inline (V4). */
  UNIT("converge_pulsar_unit") {

    @Override
    List<PulsarTxnStore.Logged> messages(Connection c, long most, long least) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(UNIT_MESSAGES)) {
        ps.setLong(1, most);
        ps.setLong(2, least);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return List.of();
          }
          String[] ids = (String[]) rs.getArray(1).getArray();
          String[] topics = (String[]) rs.getArray(2).getArray();
          String[] keys = (String[]) rs.getArray(3).getArray();
          List<Map<String, String>> properties = PulsarTxnStore.properties((String[]) rs.getArray(4).getArray());
          byte[][] payloads = (byte[][]) rs.getArray(5).getArray();
          if (properties.size() != ids.length) {
            throw new IllegalStateException("Pulsar transaction (" + most + "," + least + ") logs " + ids.length
                + " messages but the properties of " + properties.size());
          }
          List<PulsarTxnStore.Logged> out = new ArrayList<>(ids.length);
          for (int i = 0; i < ids.length; i++) {
            out.add(new PulsarTxnStore.Logged(ids[i], topics[i], keys[i], properties.get(i), payloads[i]));
          }
          return out;
        }
      }
    }
  },

  /** A transaction row and a row per message, as versions before V4 logged a unit: read and deleted only. */
  TXN("converge_pulsar_txn") {

    @Override
    List<PulsarTxnStore.Logged> messages(Connection c, long most, long least) throws SQLException {
      List<PulsarTxnStore.Logged> out = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(TXN_MESSAGES)) {
        ps.setLong(1, most);
        ps.setLong(2, least);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            String[] flat = (String[]) rs.getArray(4).getArray();
            Map<String, String> props = new LinkedHashMap<>();
            for (int i = 0; i + 1 < flat.length; i += 2) {
              props.put(flat[i], flat[i + 1]);
            }
            out.add(new PulsarTxnStore.Logged(rs.getString(1), rs.getString(2), rs.getString(3), props,
                rs.getBytes(5)));
          }
        }
      }
      return out;
    }
  };

  private static final String UNIT_MESSAGES = """
      SELECT message_ids, topics, msg_keys, properties, payloads FROM converge_pulsar_unit
      WHERE txn_most = ? AND txn_least = ?
      """;
  /** In publish order; rows logged before {@code seq} existed (V3, all 0) fall back to the id order they had. */
  private static final String TXN_MESSAGES = """
      SELECT message_id, topic, msg_key, properties, payload FROM converge_pulsar_txn_message
      WHERE txn_most = ? AND txn_least = ? ORDER BY seq, message_id
      """;
  /** Deletes a confirmed transaction's row (in {@link #TXN}, its messages' rows cascade). */
  private static final String DELETE = "DELETE FROM %s WHERE txn_most = ? AND txn_least = ?";
  /**
   * Whether the database's clock, read now (not the claim's transaction start: the broker was asked after it), is
   * still at least a margin before the transaction's deadline.
   */
  private static final String BEFORE_DEADLINE = """
      SELECT clock_timestamp() < deadline - make_interval(secs => ?) FROM %s
      WHERE txn_most = ? AND txn_least = ?
      """;

  /** The table of the transaction's row. */
  final String table;
  /**
   * Recovery's row lifecycle, claimed: the oldest transaction of a group logged more than a grace ago, unparked and
   * due (never retried: no due time), locked until the claiming connection commits, so another instance's scan skips
   * it instead of re-publishing it too; a failed attempt is counted and retried later, or parks the transaction.
   * Confirming one deletes its row, so the lifecycle has no open predicate.
   */
  final RowLifecycle lifecycle;
  final String delete;
  final String beforeDeadline;

  LogLayout(String table) {
    this.table = table;
    this.lifecycle = RowLifecycle.builder(table).key("txn_most", "txn_least").returning("deadline")
        .attempts("attempts").dueAt("next_attempt_at").reason("reason").parkedAt("parked_at").claimOrder("created_at")
        .claimWhere("producer_group = ? AND created_at < now() - make_interval(secs => ?)").build();
    this.delete = DELETE.formatted(table);
    this.beforeDeadline = BEFORE_DEADLINE.formatted(table);
  }

  /** The logged messages of transaction {@code (most, least)} in publish order, read on {@code c}. */
  abstract List<PulsarTxnStore.Logged> messages(Connection c, long most, long least) throws SQLException;
}
