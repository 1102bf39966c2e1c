package io.converge.outbox.internal;

import io.converge.producer.OutgoingMessage;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.TxnBackend;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Map;

/** The started outbox backend of one producer: stateless, one insert per message. Thread-safe. */
public final class OutboxTxnBackend implements TxnBackend {

  static final String INSERT = """
      INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key, tag,
                                   header_names, header_values, payload)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
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
        try (PreparedStatement ps = connection.prepareStatement(INSERT)) {
          ps.setString(1, m.id());
          ps.setString(2, context.group());
          ps.setString(3, m.topic());
          ps.setString(4, m.key() != null ? m.key() : m.id());
          ps.setString(5, m.key());
          ps.setString(6, m.tag());
          ps.setArray(7, connection.createArrayOf("text", headers.keySet().toArray()));
          ps.setArray(8, connection.createArrayOf("text", headers.values().toArray()));
          ps.setBytes(9, m.payload());
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
