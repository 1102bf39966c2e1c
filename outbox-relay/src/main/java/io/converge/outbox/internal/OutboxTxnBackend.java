package io.converge.outbox.internal;

import io.converge.producer.OutgoingMessage;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.TxnBackend;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Map;

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
 */
public final class OutboxTxnBackend implements TxnBackend {

  static final String INSERT = """
      WITH key_lock AS (SELECT pg_advisory_xact_lock(hashtextextended('converge_outbox:' || ?, 0)))
      INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key, tag,
                                   header_names, header_values, payload)
      SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? FROM key_lock
      """;

  private final BackendContext context;

  /** The backend of the producer described by {@code context}. */
  public OutboxTxnBackend(BackendContext context) {
    this.context = context;
  }

  @Override
  public BackendTransaction begin() {
    return new BackendTransaction() {
      @Override
      public void publish(OutgoingMessage m, Connection connection) throws Exception {
        Map<String, String> headers = m.envelope(context.group(), context.clock().millis());
        String orderKey = m.key() != null ? m.key() : m.id();
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
      }

      @Override
      public void rollbackToSavepoint(int kept) {
        // the rows inserted after the savepoint rolled back with it: the relay never sees them
      }

      @Override
      public void afterCommit() {
        // the row is committed: the relay takes it from here
      }

      @Override
      public void afterRollback() {
        // the row rolled back with the unit of work: nothing to undo
      }
    };
  }

  @Override
  public void close() {
    // no client to stop
  }
}
