package io.converge.examples.notification;

import io.converge.core.tracing.Tracing;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.SagaOrder;
import io.converge.examples.events.Orchestrated;
import io.converge.producer.TxnProducer;
import io.converge.saga.SagaParticipant;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Notification's part of the orchestrated saga: the participant {@code notification}, step {@code notify}, one
 * notification per order (the participant's stored reply answers a command sent again). No compensation: a message
 * sent cannot be taken back, and the only step after it ({@code mark-paid}) does not refuse.
 */
@Configuration(proxyBeanMethods = false)
@Orchestrated
class NotificationParticipant {

  private static final byte[] DONE = "{}".getBytes(StandardCharsets.UTF_8);

  @Bean
  SagaParticipant notificationSagaParticipant(TxnProducer producer, EventCodec codec, Clock clock,
      ObjectProvider<Tracing> tracing) {
    return SagaParticipant.builder("notification").producer(producer).tracing(tracing.getIfAvailable(Tracing::global))
        .step("notify", (c, m) -> {
          SagaOrder o = codec.read(m, SagaOrder.class);
          try (PreparedStatement ps = c.prepareStatement("""
              INSERT INTO notification (order_id, customer_id, text, sent_at) VALUES (?, ?, ?, ?)
              ON CONFLICT (order_id) DO NOTHING""")) {
            ps.setString(1, o.orderId());
            ps.setString(2, o.customerId());
            ps.setString(3, "Your order " + o.orderId() + " is paid (" + o.amountCents() + " cents).");
            ps.setTimestamp(4, Timestamp.from(clock.instant()));
            ps.executeUpdate();
          }
          return DONE;
        }).build();
  }
}
