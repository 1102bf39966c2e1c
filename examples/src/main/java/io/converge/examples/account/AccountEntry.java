package io.converge.examples.account;

import io.converge.examples.jpa.OrderKeyedRow;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Table;
import java.time.Instant;

/**
 * One debit (table {@code account_entry}), keyed by the order: a second debit of the same order is
 * refused by the primary key even if a duplicate event got past the consumer's dedup.
 */
@Entity
@Table(name = "account_entry")
public class AccountEntry extends OrderKeyedRow {

  @Column(name = "amount_cents", nullable = false)
  private long amountCents;

  protected AccountEntry() {
  }

  AccountEntry(String orderId, String customerId, long amountCents, Instant createdAt) {
    super(orderId, customerId, createdAt);
    this.amountCents = amountCents;
  }

  public long getAmountCents() {
    return amountCents;
  }
}
