package io.converge.examples.notification;

import io.converge.examples.jpa.OrderKeyedRow;
import jakarta.persistence.AttributeOverride;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Table;
import java.time.Instant;

/** A notification sent (table {@code notification}, one per paid order). */
@Entity
@Table(name = "notification")
@AttributeOverride(name = "writtenAt", column = @Column(name = "sent_at", nullable = false))
public class Notification extends OrderKeyedRow {

  @Column(nullable = false)
  private String text;

  protected Notification() {
  }

  Notification(String orderId, String customerId, String text, Instant sentAt) {
    super(orderId, customerId, sentAt);
    this.text = text;
  }

  public String getText() {
    return text;
  }
}
