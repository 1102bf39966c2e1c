package io.converge.examples.account;

import io.converge.examples.events.SagaEvents;
import io.converge.examples.events.ServiceCommons;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Import;

/**
 * The account service: debits the buyer on {@code StockReserved} with a versioned balance update, and
 * answers {@code PaymentSucceeded} or {@code PaymentFailed}. Configuration: {@code account.properties}.
 */
@SpringBootApplication
@Import({ServiceCommons.class, SagaEvents.class})
public class AccountServiceApp {

  /** Runs the service alone, against the servers named in its configuration. */
  public static void main(String[] args) {
    new SpringApplicationBuilder(AccountServiceApp.class).properties("spring.config.name=account").run(args);
  }
}
