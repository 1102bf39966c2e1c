package io.converge.examples.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Id;
import jakarta.persistence.MappedSuperclass;
import java.time.Instant;

/**
 * A row a saga step writes once per order: the primary key is the order id ({@code order_id}), so a second write for
 * the same order is refused by the database even if a duplicate event got past the consumer's dedup. It names the
 * customer ({@code customer_id}) and when it was written ({@code created_at}; a subclass may rename the column with
 * {@code @AttributeOverride(name = "writtenAt", ...)}). Not thread-safe (an entity belongs to one persistence context).
 */
@MappedSuperclass
public abstract class OrderKeyedRow {

  @Id
  @Column(name = "order_id")
  private String orderId;
  @Column(name = "customer_id", nullable = false)
  private String customerId;
  @Column(name = "created_at", nullable = false)
  private Instant writtenAt;

  /** For JPA. */
  protected OrderKeyedRow() {
  }

  /** A row of order {@code orderId} of customer {@code customerId}, written at {@code writtenAt}. */
  protected OrderKeyedRow(String orderId, String customerId, Instant writtenAt) {
    this.orderId = orderId;
    this.customerId = customerId;
    this.writtenAt = writtenAt;
  }

  /** The order this row belongs to (its primary key). */
  public String getOrderId() {
    return orderId;
  }
}
