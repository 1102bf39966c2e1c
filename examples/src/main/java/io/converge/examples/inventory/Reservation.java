package io.converge.examples.inventory;

import io.converge.examples.jpa.VersionedEntity;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** The stock held for one order (table {@code reservation}, one row per order). */
@Entity
@Table(name = "reservation")
public class Reservation extends VersionedEntity {

  /** RESERVED → SOLD (paid) | RELEASED (compensated). */
  public enum State {
    RESERVED, SOLD, RELEASED
  }

  @Id
  @Column(name = "order_id")
  private String orderId;
  @Column(nullable = false)
  private String sku;
  @Column(nullable = false)
  private int quantity;
  @Enumerated(EnumType.STRING)
  @Column(nullable = false)
  private State state;

  protected Reservation() {
  }

  Reservation(String orderId, String sku, int quantity) {
    this.orderId = orderId;
    this.sku = sku;
    this.quantity = quantity;
    this.state = State.RESERVED;
  }

  public String getOrderId() {
    return orderId;
  }

  public String getSku() {
    return sku;
  }

  public int getQuantity() {
    return quantity;
  }

  public State getState() {
    return state;
  }

  void setState(State state) {
    this.state = state;
  }
}
