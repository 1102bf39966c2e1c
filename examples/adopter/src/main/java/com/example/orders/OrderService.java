package com.example.orders;

import io.converge.producer.OutgoingMessage;
import io.converge.producer.spring.TransactionalPublisher;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Places orders: the order row and its {@code order-created} message commit together, or neither does. */
@Service
public class OrderService {

  private final JdbcTemplate jdbc;
  private final TransactionalPublisher publisher;

  public OrderService(JdbcTemplate jdbc, TransactionalPublisher publisher) {
    this.jdbc = jdbc;
    this.publisher = publisher;
  }

  /** Places an order of {@code quantity} x {@code sku}; returns its id. */
  @Transactional
  public String place(String sku, int quantity) {
    String id = UUID.randomUUID().toString();
    jdbc.update("INSERT INTO orders (id, sku, quantity) VALUES (?, ?, ?)", id, sku, quantity);
    String json = "{\"orderId\":\"" + id + "\",\"sku\":\"" + sku + "\",\"quantity\":" + quantity + "}";
    publisher.publish(OutgoingMessage.builder("order-created").key(id)
        .payload(json.getBytes(StandardCharsets.UTF_8)).build());
    if (quantity <= 0) {
      // after the publish on purpose: the rollback takes the message with it
      throw new IllegalArgumentException("quantity must be positive, but was " + quantity);
    }
    return id;
  }
}
