package com.example.inventory;

import io.converge.consumer.IdempotentConsumer;
import io.converge.consumer.IncomingMessage;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Reserves stock for each order. Converge runs the method in one transaction with the claim of the
 * message id: a redelivered or duplicated {@code order-created} is acknowledged without running it again.
 */
@Component
class OrderCreatedListener {

  private final JdbcTemplate jdbc;

  OrderCreatedListener(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  @IdempotentConsumer(topic = "order-created", group = "inventory")
  public void reserve(IncomingMessage message) {
    jdbc.update("INSERT INTO reservation (order_id, message_id, order_json) VALUES (?, ?, ?::jsonb)",
        message.brokerKey(), message.envelopeMessageId(), message.payloadAsString());
  }
}
