package io.converge.examples.notification;

import io.converge.consumer.IdempotentConsumer;
import io.converge.consumer.IncomingMessage;
import io.converge.examples.events.Choreographed;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.PaymentSucceeded;
import java.time.Clock;
import org.springframework.stereotype.Component;

/** Notifies on {@code PaymentSucceeded}; a redelivery sends nothing more. */
@Component
@Choreographed
record PaidNotifier(NotificationRepository notifications, EventCodec codec, Clock clock) {

  @IdempotentConsumer(topic = "payment-succeeded${examples.topic-suffix:}", group = "notification-on-payment-succeeded", traceAsParent = true)
  public void paid(IncomingMessage m) {
    PaymentSucceeded e = codec.read(m, PaymentSucceeded.class);
    if (!notifications.existsById(e.orderId())) {
      notifications.save(new Notification(e.orderId(), e.customerId(),
          "Your order " + e.orderId() + " is paid (" + e.amountCents() + " cents).", clock.instant()));
    }
  }
}
