package io.converge.examples.order;

import io.converge.consumer.IdempotentConsumer;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.StateMachine;
import io.converge.consumer.spring.TransitionHistory;
import io.converge.examples.events.Choreographed;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.PaymentFailed;
import io.converge.examples.events.Events.PaymentSucceeded;
import io.converge.examples.events.Events.StockRejected;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Ends the saga in the order service: paid on {@code PaymentSucceeded}, canceled on
 * {@code StockRejected} or {@code PaymentFailed}. Each runs in the dedup transaction of
 * {@code @IdempotentConsumer}, so a redelivered event changes nothing. The choreographed flow only (in the
 * orchestrated one, {@link OrderSaga}'s local steps end the order).
 */
@Component
@Choreographed
record OrderOutcomes(OrderRepository orders, EventCodec codec, Clock clock, SagaMetrics metrics,
    TransitionHistory history) {

  private static final Logger log = LoggerFactory.getLogger(OrderOutcomes.class);

  @IdempotentConsumer(topic = "payment-succeeded${examples.topic-suffix:}", group = "order-on-payment-succeeded", traceAsParent = true)
  public void paid(IncomingMessage m) {
    move(codec.read(m, PaymentSucceeded.class).orderId(), OrderState.PAID, null);
  }

  @IdempotentConsumer(topic = "payment-failed${examples.topic-suffix:}", group = "order-on-payment-failed", traceAsParent = true)
  public void paymentFailed(IncomingMessage m) {
    PaymentFailed e = codec.read(m, PaymentFailed.class);
    move(e.orderId(), OrderState.CANCELED, "payment: " + e.reason());
  }

  @IdempotentConsumer(topic = "stock-rejected${examples.topic-suffix:}", group = "order-on-stock-rejected", traceAsParent = true)
  public void stockRejected(IncomingMessage m) {
    StockRejected e = codec.read(m, StockRejected.class);
    move(e.orderId(), OrderState.CANCELED, "stock: " + e.reason());
  }

  private void move(String orderId, OrderState to, String reason) {
    PurchaseOrder o = orders.findById(orderId)
        .orElseThrow(
            () -> new IllegalStateException("No order " + orderId + " (its outcome " + to + " arrived first?)"));
    OrderState from = o.getState();
    if (o.moveTo(to, reason, clock.instant())) {
      // the row commits with the entity's @Version update at the flush, in this handler's dedup transaction;
      // its cause is the consumer group and the message id
      history.transition(OrderState.MACHINE, orderId, from, to, o.getVersion() + 1, StateMachine.Cause.NONE);
      metrics.ended(o, to);
      log.debug("order {} is {}", orderId, to);
    }
  }
}
