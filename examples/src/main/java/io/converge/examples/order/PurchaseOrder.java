package io.converge.examples.order;

import io.converge.examples.jpa.VersionedEntity;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** An order (table {@code orders}); its state moves only through {@link OrderState#MACHINE}. */
@Entity
@Table(name = "orders")
public class PurchaseOrder extends VersionedEntity {

  @Id
  private String id;
  @Column(name = "customer_id", nullable = false)
  private String customerId;
  @Column(nullable = false)
  private String sku;
  @Column(nullable = false)
  private int quantity;
  @Column(name = "amount_cents", nullable = false)
  private long amountCents;
  @Enumerated(EnumType.STRING)
  @Column(nullable = false)
  private OrderState state;
  @Column(name = "cancel_reason")
  private String cancelReason;
  @Column(name = "created_event_id", nullable = false)
  private String createdEventId;
  @Column(name = "created_at", nullable = false)
  private Instant createdAt;
  @Column(name = "updated_at", nullable = false)
  private Instant updatedAt;
  /** The Idempotency-Key of the request that created the order, and its tenant; null when it had none. */
  @Column(name = "idempotency_key")
  private String idempotencyKey;
  @Column
  private String tenant;

  protected PurchaseOrder() {
  }

  PurchaseOrder(String id, String customerId, String sku, int quantity, long amountCents, String createdEventId,
      Instant now, String idempotencyKey, String tenant) {
    this.idempotencyKey = idempotencyKey;
    this.tenant = tenant;
    this.id = id;
    this.customerId = customerId;
    this.sku = sku;
    this.quantity = quantity;
    this.amountCents = amountCents;
    this.state = OrderState.CREATED;
    this.createdEventId = createdEventId;
    this.createdAt = now;
    this.updatedAt = now;
  }

  /**
   * Moves the order to {@code to}; {@code @Version} makes the write a compare-and-swap.
   *
   * @return false when the order is already in {@code to} (a late duplicate of the same outcome)
   * @throws io.converge.consumer.IllegalTransitionException when the whitelist refuses the move
   */
  boolean moveTo(OrderState to, String reason, Instant now) {
    if (state == to) {
      return false;
    }
    OrderState.MACHINE.check(id, state, to);
    state = to;
    cancelReason = reason;
    updatedAt = now;
    return true;
  }

  public String getId() {
    return id;
  }

  public String getCustomerId() {
    return customerId;
  }

  public String getSku() {
    return sku;
  }

  public int getQuantity() {
    return quantity;
  }

  public long getAmountCents() {
    return amountCents;
  }

  public OrderState getState() {
    return state;
  }

  public String getCancelReason() {
    return cancelReason;
  }

  public String getCreatedEventId() {
    return createdEventId;
  }

  public Instant getCreatedAt() {
    return createdAt;
  }
}
