package io.converge.examples.order;

import io.converge.consumer.StateMachine;
import io.converge.consumer.spring.TransitionHistory;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.OrderCreated;
import io.converge.examples.events.Topics;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.spring.TransactionalPublisher;
import java.time.Clock;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Places orders: the order row and its {@code OrderCreated} message commit together or not at all. */
@Service
public class OrderService {

  private static final Logger log = LoggerFactory.getLogger(OrderService.class);

  private final OrderRepository orders;
  private final TransactionalPublisher publisher;
  private final EventCodec codec;
  private final Topics topics;
  private final Clock clock;
  private final TransitionHistory history;

  OrderService(OrderRepository orders, TransactionalPublisher publisher, EventCodec codec, Topics topics, Clock clock,
      TransitionHistory history) {
    this.clock = clock;
    this.history = history;
    this.orders = orders;
    this.publisher = publisher;
    this.codec = codec;
    this.topics = topics;
  }

  /**
   * Creates the order and publishes {@code OrderCreated} (key: the order id) in one transaction, with the first
   * line of its history: created by {@code POST /orders} under {@code idempotencyKey} (nullable) for {@code tenant}
   * (nullable).
   */
  @Transactional
  public PurchaseOrder place(String customerId, String sku, int quantity, long amountCents, String idempotencyKey,
      String tenant) {
    String id = "ord-" + UUID.randomUUID();
    OutgoingMessage m = codec.message(topics.of(Topics.ORDER_CREATED), id,
        new OrderCreated(id, customerId, sku, quantity, amountCents));
    PurchaseOrder order = orders
        .save(new PurchaseOrder(id, customerId, sku, quantity, amountCents, m.id(), clock.instant(),
            idempotencyKey, tenant));
    publisher.publish(m);
    history.created(OrderState.MACHINE, id, order.getState(), order.getVersion(),
        new StateMachine.Cause("POST /orders", idempotencyKey, tenant));
    log.debug("order {} placed for {} ({} x {}, {} cents)", id, customerId, quantity, sku, amountCents);
    return order;
  }
}
