package io.converge.examples.payment;

/**
 * A charge as stored (table {@code charge}, UNIQUE (merchant_id, out_trade_no)); read by {@link Charges}, which
 * writes the table with conditional SQL. Immutable.
 *
 * @param failureReason why it failed; null unless {@link ChargeState#FAILED}
 */
record Charge(String id, String merchantId, String outTradeNo, long amountCents, String currency, ChargeState state,
    String failureReason) {
}
