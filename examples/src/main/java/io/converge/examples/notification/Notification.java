package io.converge.examples.notification;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** A notification sent (table {@code notification}, one per paid order). */
@Entity
@Table(name = "notification")
public class Notification {

  @Id
  @Column(name = "order_id")
  private String orderId;
  @Column(name = "customer_id", nullable = false)
  private String customerId;
  @Column(nullable = false)
  private String text;
  @Column(name = "sent_at", nullable = false)
  private Instant sentAt;

  protected Notification() {
  }

  Notification(String orderId, String customerId, String text, Instant sentAt) {
    this.orderId = orderId;
    this.customerId = customerId;
    this.text = text;
    this.sentAt = sentAt;
  }

  public String getOrderId() {
    return orderId;
  }

  public String getText() {
    return text;
  }
}
