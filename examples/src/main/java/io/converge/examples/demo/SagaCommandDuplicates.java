package io.converge.examples.demo;

import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.SagaOrder;
import io.converge.examples.events.Topics;
import io.converge.producer.OutgoingMessage;
import io.converge.saga.SagaHeaders;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;

/**
 * The orchestrated flow's forced redeliveries: the first {@code reserve} command of every {@code every}-th saga sent
 * again through the broker's raw client with its original envelope id (from the coordinator's timeline,
 * {@code converge_saga_event}) and its saga headers (the command id as the participant stored it,
 * {@code converge_saga_branch}), as a broker redelivers it. The participant's consumer must absorb each one.
 */
final class SagaCommandDuplicates {

  private SagaCommandDuplicates() {
  }

  /** Re-sends the first {@code reserve} command of every {@code every}-th saga; returns how many it sent. */
  static int redeliverReserveCommands(Services s, DuplicateInjector raw, int every) throws Exception {
    Map<String, String> commandIds = new HashMap<>();
    try (Connection c = s.db("inventory").getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("""
            SELECT saga_id, command_id FROM converge_saga_branch
             WHERE participant = 'inventory' AND step = 'reserve' AND direction = 'forward'""")) {
      while (rs.next()) {
        commandIds.put(rs.getString(1), rs.getString(2));
      }
    }
    EventCodec codec = new EventCodec();
    String topic = s.topics().of(Topics.INVENTORY_COMMANDS);
    int sent = 0;
    try (Connection c = s.db("order").getConnection();
        PreparedStatement ps = c.prepareStatement("""
            SELECT o.id, o.customer_id, o.sku, o.quantity, o.amount_cents, e.attempt, e.message_id
              FROM orders o JOIN converge_saga_event e ON e.saga_id = o.id
             WHERE e.step = 'reserve' AND e.kind = 'SENT' ORDER BY o.created_at""");
        ResultSet rs = ps.executeQuery()) {
      int row = 0;
      while (rs.next()) {
        String sagaId = rs.getString(1);
        if (row++ % every != 0 || !commandIds.containsKey(sagaId)) {
          continue;
        }
        SagaOrder o = new SagaOrder(sagaId, rs.getString(2), rs.getString(3), rs.getInt(4), rs.getLong(5));
        raw.send(OutgoingMessage.builder(topic).id(rs.getString(7)).key(sagaId).payload(codec.bytes(o))
            .header(SagaHeaders.SAGA_ID, sagaId).header(SagaHeaders.STEP, "reserve")
            .header(SagaHeaders.ATTEMPT, Integer.toString(rs.getInt(6)))
            .header(SagaHeaders.DIRECTION, SagaHeaders.FORWARD)
            .header(SagaHeaders.COMMAND_ID, commandIds.get(sagaId))
            .header(SagaHeaders.REPLY_TO, s.topics().of(Topics.ORDER_SAGA_REPLIES)).build());
        sent++;
      }
    }
    return sent;
  }
}
