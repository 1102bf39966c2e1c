package io.converge.examples.inventory;

import io.converge.consumer.IdempotentConsumer;
import io.converge.consumer.IllegalTransitionException;
import io.converge.consumer.IncomingMessage;
import io.converge.examples.events.Choreographed;
import io.converge.examples.events.Events.OrderCreated;
import io.converge.examples.events.Events.PaymentFailed;
import io.converge.examples.events.Events.PaymentSucceeded;
import io.converge.examples.events.Events.StockRejected;
import io.converge.examples.events.Events.StockReserved;
import io.converge.examples.events.SagaEvents;
import io.converge.examples.events.Topics;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Inventory's part of the saga. Every handler runs in the dedup transaction of
 * {@code @IdempotentConsumer}, and publishes its follow-up event through the
 * {@link SagaEvents} in that same transaction: stock moved ⇔ event sent.
 */
@Component
@Choreographed
record InventoryHandlers(StockRepository stock, ReservationRepository reservations, SagaEvents events) {

  private static final Logger log = LoggerFactory.getLogger(InventoryHandlers.class);

  @IdempotentConsumer(topic = "order-created${examples.topic-suffix:}", group = "inventory-on-order-created", traceAsParent = true)
  public void reserve(IncomingMessage m) {
    OrderCreated e = events.read(m, OrderCreated.class);
    if (reservations.existsById(e.orderId())) {
      return; // the same order under another message id: its reservation stands
    }
    if (stock.reserve(e.sku(), e.quantity()) == 1) {
      reservations.save(new Reservation(e.orderId(), e.sku(), e.quantity()));
      events.publish(Topics.STOCK_RESERVED, e.orderId(),
          new StockReserved(e.orderId(), e.customerId(), e.sku(), e.quantity(), e.amountCents()));
    } else {
      String reason = stock.existsById(e.sku()) ? "insufficient stock" : "unknown sku";
      log.info("order {}: {} x {} refused ({})", e.orderId(), e.quantity(), e.sku(), reason);
      events.publish(Topics.STOCK_REJECTED, e.orderId(), new StockRejected(e.orderId(), e.sku(), e.quantity(), reason));
    }
  }

  @IdempotentConsumer(topic = "payment-succeeded${examples.topic-suffix:}", group = "inventory-on-payment-succeeded", traceAsParent = true)
  public void sell(IncomingMessage m) {
    String orderId = events.read(m, PaymentSucceeded.class).orderId();
    finish(orderId, Reservation.State.SOLD).ifPresent(r -> require(stock.sell(r.getSku(), r.getQuantity()), r, "sell"));
  }

  /** The compensation: the debit failed, the held stock becomes available again. */
  @IdempotentConsumer(topic = "payment-failed${examples.topic-suffix:}", group = "inventory-on-payment-failed", traceAsParent = true)
  public void release(IncomingMessage m) {
    String orderId = events.read(m, PaymentFailed.class).orderId();
    finish(orderId, Reservation.State.RELEASED).ifPresent(r -> {
      require(stock.release(r.getSku(), r.getQuantity()), r, "release");
      log.info("order {}: compensated, {} x {} released", orderId, r.getQuantity(), r.getSku());
    });
  }

  /** Moves the reservation out of RESERVED; empty when it is already in {@code to}. */
  private Optional<Reservation> finish(String orderId, Reservation.State to) {
    Reservation r = reservations.findById(orderId)
        .orElseThrow(() -> new IllegalStateException(
            "No reservation for order " + orderId + " (its payment outcome came first?)"));
    if (r.getState() == to) {
      return Optional.empty();
    }
    if (r.getState() != Reservation.State.RESERVED) {
      throw new IllegalTransitionException("reservation", orderId, r.getState().name(), to.name());
    }
    r.setState(to);
    return Optional.of(r);
  }

  private static void require(int rows, Reservation r, String what) {
    if (rows != 1) {
      throw new IllegalStateException("Cannot " + what + " " + r.getQuantity() + " x " + r.getSku() + " for order "
          + r.getOrderId() + ": fewer units reserved than the reservation holds");
    }
  }
}
