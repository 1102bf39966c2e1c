package io.converge.examples.order;

import io.converge.consumer.StateMachine;
import io.converge.consumer.spring.TransitionHistory;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.OrderCreated;
import io.converge.examples.events.Events.SagaOrder;
import io.converge.examples.events.Topics;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnContext;
import io.converge.producer.spring.TransactionalPublisher;
import io.converge.saga.SagaCoordinator;
import io.converge.saga.SagaDefinition;
import java.sql.Connection;
import java.time.Clock;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Places orders: the order row and its {@code OrderCreated} message commit together or not at all (the choreographed
 * flow), or the order row and the start of its orchestrated saga ({@link OrderSaga}: the saga's row and its first
 * command) do.
 */
@Service
public class OrderService {

  private static final Logger log = LoggerFactory.getLogger(OrderService.class);

  private final OrderRepository orders;
  private final TransactionalPublisher publisher;
  private final EventCodec codec;
  private final Topics topics;
  private final Clock clock;
  private final TransitionHistory history;
  private final SagaCoordinator coordinator;
  private final SagaDefinition<SagaOrder> saga;
  private final DataSource dataSource;

  OrderService(OrderRepository orders, TransactionalPublisher publisher, EventCodec codec, Topics topics, Clock clock,
      TransitionHistory history, ObjectProvider<SagaCoordinator> coordinator,
      ObjectProvider<SagaDefinition<SagaOrder>> saga, DataSource dataSource) {
    this.coordinator = coordinator.getIfAvailable();
    this.saga = saga.getIfAvailable();
    this.dataSource = dataSource;
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
    if (saga != null) {
      return placeOrchestrated(id, customerId, sku, quantity, amountCents, idempotencyKey, tenant);
    }
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

  /** The orchestrated flow: the order (its created-event id is its saga id) and its saga start in this transaction. */
  private PurchaseOrder placeOrchestrated(String id, String customerId, String sku, int quantity, long amountCents,
      String idempotencyKey, String tenant) {
    PurchaseOrder order = orders.save(new PurchaseOrder(id, customerId, sku, quantity, amountCents, id,
        clock.instant(), idempotencyKey, tenant));
    history.created(OrderState.MACHINE, id, order.getState(), order.getVersion(),
        new StateMachine.Cause("POST /orders", idempotencyKey, tenant));
    coordinator.start(springTransaction(), saga, id, new SagaOrder(id, customerId, sku, quantity, amountCents));
    log.debug("order {} placed for {} ({} x {}, {} cents), saga started", id, customerId, quantity, sku, amountCents);
    return order;
  }

  /**
   * The running Spring transaction as a unit of work of the coordinator's producer: its connection (the one JPA
   * writes on) and the {@link TransactionalPublisher}, so the saga starts iff the order commits.
   */
  private TxnContext springTransaction() {
    return new TxnContext() {

      @Override
      public Connection connection() {
        return DataSourceUtils.getConnection(dataSource);
      }

      @Override
      public String publish(OutgoingMessage message) {
        return publisher.publish(message);
      }
    };
  }
}
