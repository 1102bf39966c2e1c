package io.converge.outbox.internal;

import io.converge.core.ConvergeException;
import io.converge.core.internal.DayPartitions;
import io.converge.core.internal.PipelinedCommit;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.CommitWrite;
import io.converge.producer.spi.TxnBackend;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The started outbox backend of one producer: stateless; each unit of work writes its rows when it commits.
 * Thread-safe.
 *
 * <p>A unit's messages are kept in memory while it runs and written as its {@link CommitWrite}: in
 * {@code inTransaction} the key locks, the rows and the {@code COMMIT} travel in one round trip (a one-message unit
 * costs the business transaction no extra round trip); a joined transaction writes them in its
 * {@code beforeCommit}, before its owner commits. A savepoint rollback drops the messages published after it.
 *
 * <p>Per-key commit order: the relays send a key's rows in seq order, so seq order must be the commit order of the
 * key, whatever the application locks. The write therefore first takes a transaction-scoped advisory lock on each
 * order key of the unit ({@code pg_advisory_xact_lock} on a 64-bit hash of it), once per key, and only then draws
 * the rows' seqs: a second unit writing the same key waits until the first commits or rolls back. The locks are held
 * from the write to the commit only (not while the unit runs), and every unit takes its keys in the same order (by
 * hash), so two units publishing the same keys in opposite orders do not deadlock on them. A hash collision
 * serialises two keys (safe, only slower).
 *
 * <p>A unit of work that publishes a key which an enclosing, still open unit of the same thread also published (a
 * Spring {@code REQUIRES_NEW} transaction inside the one it suspended) fails at once with a
 * {@link ConvergeException} naming the key: an enclosing joined unit may hold the key's lock from its write to its
 * commit, and a unit waiting for its own thread would wait for ever, where PostgreSQL sees no deadlock.
 */
public final class OutboxTxnBackend implements TxnBackend {

  private static final String COLUMNS = """
      INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key, tag,
                                   header_names, header_values, payload, day)
      """;

  /**
   * The partition the unit's rows go to (outbox-relay README, "Partitions by day"): the UTC day of the producer's
   * clock (the parameter) while that day's partition exists, else the catch-all (day 1970-01-01). Looked up in
   * converge_outbox's own schema (the one the INSERT resolves), never through the search path. Evaluated after the
   * INSERT's lock on converge_outbox: a partition is created and dropped under a lock that conflicts with it
   * ({@code DayPartitions}), so the statement sees it either before or after, and a drop waits for the rows' commit
   * (then finds them unpublished and keeps the partition).
   */
  static final String ROUTE = """
      route AS (
        SELECT CASE WHEN %s IS NOT NULL
                    THEN d ELSE DATE '1970-01-01' END AS day
          FROM (SELECT CAST(? AS date) AS d) AS today)
      """.formatted(DayPartitions.partitionLookup("converge_outbox", "d"));

  /** A one-message unit: its key's lock and its row in one statement. */
  static final String INSERT_ONE = """
      WITH key_lock AS (SELECT pg_advisory_xact_lock(hashtextextended('converge_outbox:' || ?, 0))),
      """ + ROUTE + COLUMNS + """
      SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, r.day FROM key_lock, route r
      """;

  /** The unit's order keys, each locked once, in hash order (the same order for every unit). */
  static final String LOCK_KEYS = """
      SELECT pg_advisory_xact_lock(h)
        FROM (SELECT DISTINCT hashtextextended('converge_outbox:' || k, 0) AS h FROM unnest(?::text[]) AS k) AS keys
       ORDER BY h
      """;

  /** The values of one more row of {@link #INSERT_ROW}. */
  private static final String MORE_VALUES = ", (?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT day FROM route))";

  /** The rows of a unit in publish order (the seqs are drawn in the order of the VALUES list). */
  static final String INSERT_ROW = "WITH " + ROUTE + COLUMNS + "VALUES " + MORE_VALUES.substring(2);

  /** Units of more messages write their rows with a JDBC batch, then commit. */
  static final int MAX_PIPELINED = 100;

  /** The open outbox units of work of this thread that published, with their keys. */
  private static final ThreadLocal<List<OpenUnit>> OPEN_UNITS = ThreadLocal.withInitial(ArrayList::new);

  private final BackendContext context;

  /** The backend of the producer described by {@code context}. */
  public OutboxTxnBackend(BackendContext context) {
    this.context = context;
  }

  /** A message as its row will be written, stamped when it was published. */
  private record Row(OutgoingMessage message, String orderKey, Map<String, String> headers) {
  }

  @Override
  public BackendTransaction begin() {
    return new BackendTransaction() {

      private OpenUnit unit;
      private final List<Row> rows = new ArrayList<>();

      @Override
      public void publish(OutgoingMessage m, Connection connection) {
        Map<String, String> headers = m.envelope(context.group(), context.clock().millis());
        String orderKey = m.key() != null ? m.key() : m.id();
        if (unit == null) {
          unit = OpenUnit.open(connection);
        }
        unit.refuseKeyHeldByAnother(orderKey, m.id());
        rows.add(new Row(m, orderKey, headers));
        unit.keys.add(orderKey);
      }

      @Override
      public void rollbackToSavepoint(int kept) {
        // nothing is written before the commit: the messages published after the savepoint are dropped here
        rows.subList(kept, rows.size()).clear();
        if (unit != null) {
          unit.keys.clear();
          rows.forEach(r -> unit.keys.add(r.orderKey()));
        }
      }

      @Override
      public CommitWrite commitWrite() {
        return rows.isEmpty() ? null : new RowsWrite(List.copyOf(rows));
      }

      @Override
      public void afterCommit() {
        // the rows are committed: the relay takes it from here
        OpenUnit.close(unit);
      }

      @Override
      public void afterRollback() {
        // the rows, if written, rolled back with the unit of work: nothing to undo
        OpenUnit.close(unit);
      }
    };
  }

  /** The rows of one unit with their key locks, before its commit or in the commit's round trip. */
  private final class RowsWrite implements CommitWrite {

    private final List<Row> rows;

    RowsWrite(List<Row> rows) {
      this.rows = rows;
    }

    @Override
    public void write(Connection c) throws SQLException {
      if (rows.size() == 1) {
        try (PreparedStatement ps = c.prepareStatement(INSERT_ONE)) {
          ps.setString(1, rows.get(0).orderKey());
          ps.setObject(2, today());
          bind(c, ps, 3, rows.get(0));
          ps.executeUpdate();
        }
        return;
      }
      try (PreparedStatement lock = c.prepareStatement(LOCK_KEYS)) {
        lock.setArray(1, keys(c));
        lock.execute();
      }
      try (PreparedStatement ps = c.prepareStatement(INSERT_ROW)) {
        LocalDate day = today();
        for (Row r : rows) {
          ps.setObject(1, day);
          bind(c, ps, 2, r);
          ps.addBatch();
        }
        ps.executeBatch();
      }
    }

    @Override
    public void writeAndCommit(Connection c) throws SQLException {
      if (rows.size() > MAX_PIPELINED || !PipelinedCommit.supported(c)) {
        write(c);
        c.commit();
        return;
      }
      String sql;
      if (rows.size() == 1) {
        sql = INSERT_ONE;
      } else {
        StringBuilder b = new StringBuilder(LOCK_KEYS.strip()).append(";\n").append(INSERT_ROW);
        for (int i = 1; i < rows.size(); i++) {
          b.append(MORE_VALUES);
        }
        sql = b.toString();
      }
      try (PreparedStatement ps = c.prepareStatement(PipelinedCommit.withCommit(sql))) {
        int i = 1;
        if (rows.size() == 1) {
          ps.setString(i++, rows.get(0).orderKey());
        } else {
          ps.setArray(i++, keys(c));
        }
        ps.setObject(i++, today());
        for (Row r : rows) {
          i = bind(c, ps, i, r);
        }
        ps.execute();
      }
      PipelinedCommit.committed(c);
    }

    /** The day whose partition the rows go to, by the producer's clock. */
    private LocalDate today() {
      return LocalDate.ofInstant(context.clock().instant(), ZoneOffset.UTC);
    }

    private java.sql.Array keys(Connection c) throws SQLException {
      return c.createArrayOf("text", rows.stream().map(Row::orderKey).distinct().toArray());
    }

    /** Binds {@code r}'s nine columns from parameter {@code i}; returns the next parameter's index. */
    private int bind(Connection c, PreparedStatement ps, int i, Row r) throws SQLException {
      OutgoingMessage m = r.message();
      ps.setString(i++, m.id());
      ps.setString(i++, context.group());
      ps.setString(i++, m.topic());
      ps.setString(i++, r.orderKey());
      ps.setString(i++, m.key());
      ps.setString(i++, m.tag());
      ps.setArray(i++, c.createArrayOf("text", r.headers().keySet().toArray()));
      ps.setArray(i++, c.createArrayOf("text", r.headers().values().toArray()));
      ps.setBytes(i++, m.payload());
      return i;
    }
  }

  /** An open unit of work of this thread and the order keys it published. Used by one thread. */
  private static final class OpenUnit {

    private final Connection connection;
    private final Set<String> keys = new HashSet<>();

    private OpenUnit(Connection connection) {
      this.connection = connection;
    }

    static OpenUnit open(Connection connection) {
      List<OpenUnit> open = OPEN_UNITS.get();
      // a unit whose end was never reported (a commit of unknown outcome) is gone with its connection
      open.removeIf(OpenUnit::connectionClosed);
      OpenUnit unit = new OpenUnit(connection);
      open.add(unit);
      return unit;
    }

    static void close(OpenUnit unit) {
      if (unit != null) {
        List<OpenUnit> open = OPEN_UNITS.get();
        open.remove(unit);
        if (open.isEmpty()) {
          OPEN_UNITS.remove();
        }
      }
    }

    void refuseKeyHeldByAnother(String key, String messageId) {
      for (OpenUnit other : OPEN_UNITS.get()) {
        if (other != this && other.keys.contains(key) && !other.connectionClosed()) {
          throw new ConvergeException("Message " + messageId + " on key '" + key + "' cannot be published: an enclosing"
              + " unit of work of this thread (suspended, e.g. by a REQUIRES_NEW transaction) published it and takes the"
              + " key's order lock when it commits, so this unit could wait for itself; publish the key in the"
              + " enclosing unit or use another key", messageId, null);
        }
      }
    }

    private boolean connectionClosed() {
      try {
        return connection.isClosed();
      } catch (SQLException e) {
        return true;
      }
    }
  }

  @Override
  public void close() {
    // no client to stop
  }
}
