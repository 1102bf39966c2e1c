package io.converge.examples.account;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/**
 * One debit (table {@code account_entry}), keyed by the order: a second debit of the same order is
 * refused by the primary key even if a duplicate event got past the consumer's dedup.
 */
@Entity
@Table(name = "account_entry")
public class AccountEntry {

  @Id
  @Column(name = "order_id")
  private String orderId;
  @Column(name = "customer_id", nullable = false)
  private String customerId;
  @Column(name = "amount_cents", nullable = false)
  private long amountCents;
  @Column(name = "created_at", nullable = false)
  private Instant createdAt;

  protected AccountEntry() {
  }

  AccountEntry(String orderId, String customerId, long amountCents, Instant createdAt) {
    this.orderId = orderId;
    this.customerId = customerId;
    this.amountCents = amountCents;
    this.createdAt = createdAt;
  }

  public String getOrderId() {
    return orderId;
  }

  public long getAmountCents() {
    return amountCents;
  }
}
