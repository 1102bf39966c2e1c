package io.converge.examples.inventory;

import io.converge.examples.events.SagaEvents;
import io.converge.examples.events.ChaosReplyFaults;
import io.converge.examples.events.ServiceCommons;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Import;

/**
 * The inventory service: reserves stock on {@code OrderCreated}, sells it on {@code PaymentSucceeded}
 * and releases it on {@code PaymentFailed} (the saga's compensation). Configuration:
 * {@code inventory.properties}.
 */
@SpringBootApplication
@Import({ServiceCommons.class, SagaEvents.class, ChaosReplyFaults.class})
public class InventoryServiceApp {

  /** Runs the service alone, against the servers named in its configuration. */
  public static void main(String[] args) {
    new SpringApplicationBuilder(InventoryServiceApp.class).properties("spring.config.name=inventory").run(args);
  }
}
