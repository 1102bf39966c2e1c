package io.converge.examples.payment;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A refund (table {@code refund}, UNIQUE (charge_id, out_refund_no)); read-only here, written by {@link Charges}. */
@Entity
@Table(name = "refund")
public class Refund {

  @Id
  private String id;
  @Column(name = "charge_id")
  private String chargeId;
  @Column(name = "out_refund_no")
  private String outRefundNo;
  @Column(name = "amount_cents")
  private long amountCents;
  private String state;

  protected Refund() {
  }

  public String getId() {
    return id;
  }

  public String getChargeId() {
    return chargeId;
  }

  public String getOutRefundNo() {
    return outRefundNo;
  }

  public long getAmountCents() {
    return amountCents;
  }

  public String getState() {
    return state;
  }
}
