package io.converge.examples.payment;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/** A charge (table {@code charge}, UNIQUE (merchant_id, out_trade_no)); read-only here, written by {@link Charges}. */
@Entity
@Table(name = "charge")
public class Charge {

  @Id
  private String id;
  @Column(name = "merchant_id")
  private String merchantId;
  @Column(name = "out_trade_no")
  private String outTradeNo;
  @Column(name = "amount_cents")
  private long amountCents;
  private String currency;
  @Enumerated(EnumType.STRING)
  private ChargeState state;
  @Column(name = "failure_reason")
  private String failureReason;
  @Version
  private long version;

  protected Charge() {
  }

  public String getId() {
    return id;
  }

  public String getMerchantId() {
    return merchantId;
  }

  public String getOutTradeNo() {
    return outTradeNo;
  }

  public long getAmountCents() {
    return amountCents;
  }

  public String getCurrency() {
    return currency;
  }

  public ChargeState getState() {
    return state;
  }

  public String getFailureReason() {
    return failureReason;
  }
}
