package io.converge.examples.order;

import io.converge.consumer.spring.TransitionHistory;
import io.converge.examples.events.ChaosReplyFaults;
import io.converge.examples.events.ServiceCommons;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * The order service: {@code POST /orders} (with {@code Idempotency-Key}) creates an order and
 * publishes {@code OrderCreated} in the same transaction; it marks the order paid or canceled when the
 * saga's outcome arrives. Configuration: {@code order.properties}. With {@code examples.chaos.reply-faults=true}
 * (chaos runs only) the saga coordinator's TCC commands meet the chaos shots ({@link ChaosReplyFaults}).
 */
@SpringBootApplication
@Import({ServiceCommons.class, ChaosReplyFaults.class})
public class OrderServiceApp {

  /** The orders' transitions, recorded in the transaction that makes them ({@code converge_state_transition}). */
  @Bean
  TransitionHistory transitionHistory(DataSource dataSource) {
    return TransitionHistory.of(dataSource);
  }

  /** Runs the service alone, against the servers named in its configuration. */
  public static void main(String[] args) {
    new SpringApplicationBuilder(OrderServiceApp.class).properties("spring.config.name=order").run(args);
  }
}
