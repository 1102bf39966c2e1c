package io.converge.examples.payment;

/**
 * A refund as stored (table {@code refund}, UNIQUE (charge_id, out_refund_no)); read by {@link Charges}, which writes
 * the table with conditional SQL. Immutable.
 *
 * @param state {@code PENDING} or {@code SUCCEEDED}
 */
record Refund(String id, String chargeId, String outRefundNo, long amountCents, String state) {
}
