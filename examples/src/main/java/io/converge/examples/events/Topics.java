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

  /** A set of names with {@code suffix}; null means none. */
  public Topics {
    suffix = suffix == null ? "" : suffix;
  }

  /** The full name of the topic with base name {@code base}. */
  public String of(String base) {
    return base + suffix;
  }

  /** Every topic of the saga, full names. */
  public List<String> all() {
    return List.of(of(ORDER_CREATED), of(STOCK_RESERVED), of(STOCK_REJECTED), of(PAYMENT_SUCCEEDED),
        of(PAYMENT_FAILED));
  }
}
