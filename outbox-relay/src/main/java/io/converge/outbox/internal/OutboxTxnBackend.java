package io.converge.outbox.internal;

import io.converge.core.ConvergeException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.TxnBackend;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The started outbox backend of one producer: stateless, one statement per message. Thread-safe.
 *
 * <p>Per-key commit order: the relays send a key's rows in seq order, so seq order must be the commit
 * order of the key, whatever the application locks. The insert therefore first takes a
 * transaction-scoped advisory lock on the order key ({@code pg_advisory_xact_lock} on a 64-bit hash of
 * it), in the same statement (no extra round trip): a second transaction writing the same key waits
 * until the first commits or rolls back, and only then draws its seq. A hash collision serialises two
 * keys (safe, only slower). A unit of work that publishes to several keys takes their locks in its
 * publish order; two units of work publishing to the same keys in opposite orders may deadlock
 * (PostgreSQL aborts one of them after {@code deadlock_timeout}).
 *
 * <p>A unit of work whose own thread holds the key's lock in another, still open unit (a Spring
 * {@code REQUIRES_NEW} transaction that publishes the key of the transaction it suspended) would wait for
 * itself for ever, where PostgreSQL sees no deadlock: that publish fails at once with a
 * {@link ConvergeException} naming the key, before any lock is requested.
 */
public final class OutboxTxnBackend implements TxnBackend {

  static final String INSERT = """
      WITH key_lock AS (SELECT pg_advisory_xact_lock(hashtextextended('converge_outbox:' || ?, 0)))
      INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key, tag,
                                   header_names, header_values, payload)
      SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? FROM key_lock
      """;

  /** The open outbox units of work of this thread that published, with the keys they locked. */
  private static final ThreadLocal<List<OpenUnit>> OPEN_UNITS = ThreadLocal.withInitial(ArrayList::new);

  private final BackendContext context;

  /** The backend of the producer described by {@code context}. */
  public OutboxTxnBackend(BackendContext context) {
    this.context = context;
  }

  @Override
  public BackendTransaction begin() {
    return new BackendTransaction() {

      private OpenUnit unit;

      @Override
      public void publish(OutgoingMessage m, Connection connection) throws Exception {
        Map<String, String> headers = m.envelope(context.group(), context.clock().millis());
        String orderKey = m.key() != null ? m.key() : m.id();
        if (unit == null) {
          unit = OpenUnit.open(connection);
        }
        unit.refuseKeyHeldByAnother(orderKey, m.id());
        try (PreparedStatement ps = connection.prepareStatement(INSERT)) {
          ps.setString(1, orderKey);
          ps.setString(2, m.id());
          ps.setString(3, context.group());
          ps.setString(4, m.topic());
          ps.setString(5, orderKey);
          ps.setString(6, m.key());
          ps.setString(7, m.tag());
          ps.setArray(8, connection.createArrayOf("text", headers.keySet().toArray()));
          ps.setArray(9, connection.createArrayOf("text", headers.values().toArray()));
          ps.setBytes(10, m.payload());
          ps.executeUpdate();
        }
        unit.keys.add(orderKey);
      }

      @Override
      public void rollbackToSavepoint(int kept) {
        // the rows inserted after the savepoint rolled back with it: the relay never sees them
      }

      @Override
      public void afterCommit() {
        // the row is committed: the relay takes it from here
        OpenUnit.close(unit);
      }

      @Override
      public void afterRollback() {
        // the row rolled back with the unit of work: nothing to undo
        OpenUnit.close(unit);
      }
    };
  }

  /** An open unit of work of this thread and the order keys it locked. Used by one thread. */
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
              + " unit of work of this thread (suspended, e.g. by a REQUIRES_NEW transaction) holds the key's order lock"
              + " until it ends, so this unit would wait for itself; publish the key in the enclosing unit or use"
              + " another key", messageId, null);
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
