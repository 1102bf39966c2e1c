package io.converge.examples.account;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/** A buyer's balance (table {@code account}; a CHECK keeps it non-negative). */
@Entity
@Table(name = "account")
public class Account {

  @Id
  @Column(name = "customer_id")
  private String customerId;
  @Column(name = "balance_cents", nullable = false)
  private long balanceCents;
  @Version
  private long version;

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

  public long getVersion() {
    return version;
  }
}
