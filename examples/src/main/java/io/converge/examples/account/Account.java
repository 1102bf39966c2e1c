package io.converge.examples.account;

import io.converge.examples.jpa.VersionedEntity;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A buyer's balance (table {@code account}; a CHECK keeps it non-negative). */
@Entity
@Table(name = "account")
public class Account extends VersionedEntity {

  @Id
  @Column(name = "customer_id")
  private String customerId;
  @Column(name = "balance_cents", nullable = false)
  private long balanceCents;

  protected Account() {
  }

  /** A new account holding {@code balanceCents}. */
  public Account(String customerId, long balanceCents) {
    this.customerId = customerId;
    this.balanceCents = balanceCents;
  }

  public String getCustomerId() {
    return customerId;
  }

  public long getBalanceCents() {
    return balanceCents;
  }
}
