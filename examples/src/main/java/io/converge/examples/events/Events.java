package io.converge.examples.events;

/**
 * The events of the order saga (article chapter 10), as JSON payloads of Converge messages. Each
 * carries the order id, which is also the message key: one order's events stay in order on one queue.
 */
public final class Events {

  private Events() {
  }

  /** order → inventory: an order was placed. */
  public record OrderCreated(String orderId, String customerId, String sku, int quantity, long amountCents) {
  }

  /** inventory → account: the stock is held for the order; the buyer may be debited. */
  public record StockReserved(String orderId, String customerId, String sku, int quantity, long amountCents) {
  }

  /** inventory → order: no stock; the order is canceled (nothing to compensate). */
  public record StockRejected(String orderId, String sku, int quantity, String reason) {
  }

  /** account → order, inventory, notification: the buyer was debited. */
  public record PaymentSucceeded(String orderId, String customerId, long amountCents) {
  }

  /** account → order, inventory: the debit was refused; inventory releases the stock (compensation). */
  public record PaymentFailed(String orderId, String customerId, long amountCents, String reason) {
  }

  /**
   * The orchestrated saga's data (saga id: the order id) and the payload of its commands to inventory, account and
   * notification.
   */
  public record SagaOrder(String orderId, String customerId, String sku, int quantity, long amountCents) {
  }
}
