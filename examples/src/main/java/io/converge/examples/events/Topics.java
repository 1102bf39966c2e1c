package io.converge.examples.events;

import java.util.List;

/**
 * The saga's topic names: a base name plus {@code examples.topic-suffix} (empty by default), so that
 * several runs can share one broker. {@code @IdempotentConsumer} annotations spell the same names
 * with the placeholder {@code ${examples.topic-suffix:}}. Immutable.
 *
 * @param suffix appended to every base name; never null
 */
public record Topics(String suffix) {

  /** Base name of {@link Events.OrderCreated}'s topic. */
  public static final String ORDER_CREATED = "order-created";
  /** Base name of {@link Events.StockReserved}'s topic. */
  public static final String STOCK_RESERVED = "stock-reserved";
  /** Base name of {@link Events.StockRejected}'s topic. */
  public static final String STOCK_REJECTED = "stock-rejected";
  /** Base name of {@link Events.PaymentSucceeded}'s topic. */
  public static final String PAYMENT_SUCCEEDED = "payment-succeeded";
  /** Base name of {@link Events.PaymentFailed}'s topic. */
  public static final String PAYMENT_FAILED = "payment-failed";

  /** Base name of the orchestrated saga's commands to inventory (take the stock). */
  public static final String INVENTORY_COMMANDS = "inventory-commands";
  /** Base name of the orchestrated saga's compensations to inventory (give the stock back). */
  public static final String INVENTORY_COMPENSATIONS = "inventory-compensations";
  /** Base name of the orchestrated saga's commands to account (debit). */
  public static final String ACCOUNT_COMMANDS = "account-commands";
  /** Base name of the orchestrated saga's compensations to account (refund a debit). */
  public static final String ACCOUNT_COMPENSATIONS = "account-compensations";
  /** Base name of the orchestrated saga's commands to notification (notify the buyer). */
  public static final String NOTIFICATION_COMMANDS = "notification-commands";
  /** Base name of the topic where the orchestrated saga's participants reply to the order service's coordinator. */
  public static final String ORDER_SAGA_REPLIES = "order-saga-replies";

  /** A set of names with {@code suffix}; null means none. */
  public Topics {
    suffix = suffix == null ? "" : suffix;
  }

  /** The full name of the topic with base name {@code base}. */
  public String of(String base) {
    return base + suffix;
  }

  /** Every topic of the saga, both flows, full names. */
  public List<String> all() {
    return List.of(of(ORDER_CREATED), of(STOCK_RESERVED), of(STOCK_REJECTED), of(PAYMENT_SUCCEEDED),
        of(PAYMENT_FAILED), of(INVENTORY_COMMANDS), of(INVENTORY_COMPENSATIONS), of(ACCOUNT_COMMANDS),
        of(ACCOUNT_COMPENSATIONS), of(NOTIFICATION_COMMANDS), of(ORDER_SAGA_REPLIES));
  }
}
