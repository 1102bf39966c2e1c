package io.converge.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.DevPlatform;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A smaller run of the demo on each backend: the five services, retried and concurrent HTTP requests,
 * injected duplicate deliveries and compensated orders, and every reconciliation invariant. 40 orders
 * is the fewest that reach every case: the poor customers c-18 and c-19 place their second order (the
 * one their balance refuses, so compensated) as orders 38 and 39; retries, bursts, a mismatched body and
 * a refusal for stock come earlier.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class, PulsarExtension.class})
class DemoIT {

  static final int ORDERS = 40;

  @Test
  void everyBackendReconciles(EmbeddedRocketMQ mq, ConvergePostgres pg, EmbeddedPulsar pulsar) throws Exception {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    DemoRunner runner = new DemoRunner(DevPlatform.of(mq, pg, pulsar),
        new PrintStream(text, true, StandardCharsets.UTF_8));
    boolean ok = runner.run(ORDERS, "rocketmq,outbox,pulsar");
    String printed = text.toString(StandardCharsets.UTF_8);
    assertThat(ok).as(printed).isTrue();
    assertThat(runner.reports()).hasSize(3).allSatisfy(r -> {
      assertThat(r.violations()).as(printed).isEmpty();
      assertThat(r.paid()).isPositive();
      assertThat(r.canceledForPayment()).isPositive();
      assertThat(r.compensations()).isEqualTo(r.canceledForPayment());
      assertThat(r.duplicatesAbsorbed()).isGreaterThanOrEqualTo(r.duplicatesInjected()).isPositive();
      assertThat(r.traffic().retriesReplayed()).isEqualTo(r.traffic().retries()).isPositive();
      assertThat(r.debitedCents()).isEqualTo(r.paidCents());
    });
    assertThat(printed).contains("backend rocketmq", "backend outbox", "backend pulsar");
  }
}
