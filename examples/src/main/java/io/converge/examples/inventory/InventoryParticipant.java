package io.converge.examples.inventory;

import io.converge.consumer.BusinessException;
import io.converge.core.tracing.Tracing;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.SagaOrder;
import io.converge.examples.events.Orchestrated;
import io.converge.examples.events.Rows;
import io.converge.producer.TxnProducer;
import io.converge.saga.SagaParticipant;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Inventory's part of the orchestrated saga: the participant {@code inventory} (converge-saga's
 * {@link SagaParticipant}, subscribed by its Spring auto-configuration to
 * {@code converge.saga.participants.inventory.*}). Step {@code reserve} takes the order's units in one conditional
 * update ({@code available -> sold}, never below zero) and records the order's reservation as SOLD; out of stock is a
 * refusal (the saga cancels the order). Its compensation gives the units back (reservation RELEASED). A saga step
 * commits its effect (no hold then confirm: that is TCC), so the units count as sold while the debit runs, and
 * only its compensation returns them. Each runs with the participant's stored reply in one transaction: a command
 * sent again is answered from it, and the work never runs twice.
 */
@Configuration(proxyBeanMethods = false)
@Orchestrated
class InventoryParticipant {

  private static final Logger log = LoggerFactory.getLogger(InventoryParticipant.class);
  private static final byte[] DONE = "{}".getBytes(StandardCharsets.UTF_8);

  @Bean
  SagaParticipant inventorySagaParticipant(TxnProducer producer, EventCodec codec, ObjectProvider<Tracing> tracing) {
    return SagaParticipant.builder("inventory").producer(producer).tracing(tracing.getIfAvailable(Tracing::global))
        .step("reserve", (c, m) -> take(c, codec.read(m, SagaOrder.class)))
        .compensation("reserve", (c, m) -> giveBack(c, codec.read(m, SagaOrder.class)))
        .build();
  }

  private static byte[] take(Connection c, SagaOrder o) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("""
        UPDATE stock SET available = available - ?, sold = sold + ?, version = version + 1
         WHERE sku = ? AND available >= ?""")) {
      ps.setLong(1, o.quantity());
      ps.setLong(2, o.quantity());
      ps.setString(3, o.sku());
      ps.setLong(4, o.quantity());
      if (ps.executeUpdate() != 1) {
        boolean known = Rows.exists(c, "stock", "sku", o.sku());
        log.info("order {}: {} x {} refused ({})", o.orderId(), o.quantity(), o.sku(),
            known ? "insufficient stock" : "unknown sku");
        throw known ? new BusinessException("insufficient-stock", "insufficient stock")
            : new BusinessException("unknown-sku", "unknown sku");
      }
    }
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO reservation (order_id, sku, quantity, state) VALUES (?, ?, ?, 'SOLD')")) {
      ps.setString(1, o.orderId());
      ps.setString(2, o.sku());
      ps.setInt(3, o.quantity());
      ps.executeUpdate();
    }
    return DONE;
  }

  /** The compensation: the units back to available, the reservation RELEASED; nothing when there is none. */
  private static byte[] giveBack(Connection c, SagaOrder o) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("""
        UPDATE reservation SET state = 'RELEASED', version = version + 1
         WHERE order_id = ? AND state = 'SOLD' RETURNING sku, quantity""")) {
      ps.setString(1, o.orderId());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return DONE;
        }
        try (PreparedStatement back = c.prepareStatement("""
            UPDATE stock SET available = available + ?, sold = sold - ?, version = version + 1
             WHERE sku = ? AND sold >= ?""")) {
          back.setLong(1, rs.getInt(2));
          back.setLong(2, rs.getInt(2));
          back.setString(3, rs.getString(1));
          back.setLong(4, rs.getInt(2));
          if (back.executeUpdate() != 1) {
            throw new IllegalStateException("Cannot give back " + rs.getInt(2) + " x " + rs.getString(1)
                + " for order " + o.orderId() + ": fewer units sold than the reservation holds");
          }
        }
      }
    }
    log.info("order {}: compensated, {} x {} given back", o.orderId(), o.quantity(), o.sku());
    return DONE;
  }
}
