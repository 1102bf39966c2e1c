package io.converge.examples.payment;

import io.converge.core.Migrations;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;

/**
 * The payment API (article 2.2 and 4.1): charges unique per {@code (merchant_id, out_trade_no)},
 * refunds unique per {@code (charge_id, out_refund_no)}, and the card-payment state machine.
 * Configuration: {@code payment.properties}.
 */
@SpringBootApplication
public class PaymentServiceApp {

  /** Runs the service alone, against the database named in its configuration. */
  public static void main(String[] args) {
    new SpringApplicationBuilder(PaymentServiceApp.class).properties("spring.config.name=payment").run(args);
  }

  /** The consumer schema (no consumer runs here): {@link ChargeState#MACHINE} records its transitions in it. */
  @Bean
  Integer convergeStateHistorySchema(DataSource dataSource) {
    return Migrations.apply(dataSource, "consumer");
  }
}
