package io.converge.consumer.spring;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.BusinessException;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MoneyAnomalyException;
import io.converge.consumer.Outcome;
import io.converge.outbox.OutboxBackend;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.core.Migrations;
import io.converge.producer.spring.TransactionalPublisher;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Issue 13.1: a handler that publishes through {@link TransactionalPublisher} and then fails for good
 * (business refusal, money anomaly) publishes nothing: its writes and its messages roll back together,
 * and only the failure outcome is recorded. Run by the Spring runner with a
 * {@code DataSourceTransactionManager}, on the RocketMQ half-message backend and on the outbox backend.
 */
@ExtendWith(RocketMQExtension.class)
class FailedHandlerPublishesNothingIT {

  private static final Duration DELIVERY_DEADLINE = Duration.ofSeconds(60);

  @Test
  void businessFailureOnTheRocketMQBackendDeliversNothing(EmbeddedRocketMQ mq) throws Exception {
    rocketmqScenario(mq, "biz", () -> new BusinessException("OUT_OF_STOCK", "no stock for sku 7"),
        Outcome.BUSINESS_FAILURE);
  }

  @Test
  void moneyAnomalyOnTheRocketMQBackendDeliversNothing(EmbeddedRocketMQ mq) throws Exception {
    rocketmqScenario(mq, "money", () -> new MoneyAnomalyException("amount mismatch", "10.00 EUR", "1.00 EUR"),
        Outcome.TICKETED);
  }

  @Test
  void businessFailureOnTheOutboxBackendLeavesNoOutboxRow() {
    outboxScenario("obiz", () -> new BusinessException("OUT_OF_STOCK", "no stock for sku 7"), Outcome.BUSINESS_FAILURE);
  }

  @Test
  void moneyAnomalyOnTheOutboxBackendLeavesNoOutboxRow() {
    outboxScenario("omoney", () -> new MoneyAnomalyException("amount mismatch", "10.00 EUR", "1.00 EUR"),
        Outcome.TICKETED);
  }

  private void rocketmqScenario(EmbeddedRocketMQ mq, String prefix,
      java.util.function.Supplier<RuntimeException> failure,
      Outcome expected) throws Exception {
    String topic = RocketMQExtension.uniqueTopic("reserved-" + prefix);
    mq.createTopic(topic);
    DataSource ds = ConvergePostgres.shared().newSchema("failpub_" + prefix);
    try (
        TxnProducer producer = TxnProducer.builder().group(RocketMQExtension.uniqueTopic("stock-" + prefix))
            .dataSource(ds)
            .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics(topic).build();
        RecordingConsumer delivered = RecordingConsumer.start(mq, topic)) {
      Scenario s = new Scenario(ds, producer, topic, failure);
      Outcome outcome = s.handler.handle(s.message(s.failingId));
      assertThat(outcome).isEqualTo(expected);

      // a later successful delivery publishes its marker: everything sent before it has had its chance
      assertThat(s.handler.handle(s.message(s.okId))).isEqualTo(Outcome.PROCESSED);
      delivered.await(m -> s.okId.equals(m.getUserProperty("order")), 1, DELIVERY_DEADLINE);
      assertThat(delivered.received(m -> s.failingId.equals(m.getUserProperty("order"))))
          .as("stock-reserved of the failed handler must never be delivered").isEmpty();
      // and a check-back of its half message answers ROLLBACK: no log row
      assertThat(s.jdbc.queryForObject("SELECT count(*) FROM converge_txn_log WHERE message_id = ?", Long.class,
          s.publishedIds[0])).isZero();
      s.assertOutcome(expected);
    }
  }

  private void outboxScenario(String prefix, java.util.function.Supplier<RuntimeException> failure, Outcome expected) {
    String topic = "reserved-" + prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    DataSource ds = ConvergePostgres.shared().newSchema("failpub_" + prefix);
    Migrations.apply(ds, "outbox");
    try (TxnProducer producer = TxnProducer.builder().group("stock-" + prefix).dataSource(ds)
        .backend(OutboxBackend.outbox()).topics(topic).build()) {
      Scenario s = new Scenario(ds, producer, topic, failure);
      assertThat(s.handler.handle(s.message(s.failingId))).isEqualTo(expected);
      assertThat(s.handler.handle(s.message(s.okId))).isEqualTo(Outcome.PROCESSED);
      // the relay publishes exactly the rows of converge_outbox
      assertThat(s.jdbc.queryForObject("SELECT count(*) FROM converge_outbox WHERE message_id = ?", Long.class,
          s.publishedIds[0])).as("the failed handler's outbox row").isZero();
      assertThat(s.jdbc.queryForObject("SELECT count(*) FROM converge_outbox WHERE message_id = ?", Long.class,
          s.publishedIds[1])).isEqualTo(1);
      s.assertOutcome(expected);
    }
  }

  /** A stock table, a handler that reserves stock, publishes stock-reserved, then fails for the failing order. */
  private static final class Scenario {

    final JdbcTemplate jdbc;
    final IdempotentHandler handler;
    final String failingId = UUID.randomUUID().toString();
    final String okId = UUID.randomUUID().toString();
    final String[] publishedIds = new String[2];
    final AtomicInteger hooks = new AtomicInteger();
    final String group = "stock_" + UUID.randomUUID().toString().substring(0, 8);

    Scenario(DataSource ds, TxnProducer producer, String topic, java.util.function.Supplier<RuntimeException> failure) {
      Migrations.apply(ds, "consumer");
      Migrations.apply(ds, "producer");
      jdbc = new JdbcTemplate(ds);
      jdbc.execute("CREATE TABLE stock (sku text PRIMARY KEY, available int NOT NULL)");
      jdbc.update("INSERT INTO stock VALUES ('sku-7', 10)");
      TransactionalPublisher publisher = new TransactionalPublisher(producer, ds);
      handler = IdempotentHandler.builder().group(group)
          .transactions(new SpringTransactionRunner(new DataSourceTransactionManager(ds), ds))
          .policy(FailurePolicy.defaults().withBackoff(Duration.ofMillis(5), Duration.ofMillis(20)))
          .onBusinessFailure((c, m, e) -> hooks.incrementAndGet())
          .handler((c, m) -> {
            String order = m.payloadAsString();
            jdbc.update("UPDATE stock SET available = available - 1 WHERE sku = 'sku-7'");
            String id = MessageIds.shared().next();
            publishedIds[order.equals(failingId) ? 0 : 1] = id;
            // one key: both messages take one queue and one END lane, so the marker comes after the failed one
            publisher.publish(OutgoingMessage.builder(topic).id(id).key("sku-7").header("order", order)
                .payload(("reserved " + order).getBytes(UTF_8)).build());
            if (order.equals(failingId)) {
              throw failure.get();
            }
          }).build();
    }

    IncomingMessage message(String order) {
      return IncomingMessage.builder().topic("orders").header(Envelope.MESSAGE_ID, order).payload(order).build();
    }

    void assertOutcome(Outcome expected) {
      // the failed handler's stock update is undone; the successful one's stays
      assertThat(jdbc.queryForObject("SELECT available FROM stock", Integer.class)).isEqualTo(9);
      assertThat(jdbc.queryForList("SELECT outcome FROM converge_dedup WHERE message_id = ?", String.class, failingId))
          .containsExactly(expected.name());
      assertThat(handler.handle(message(failingId))).isEqualTo(Outcome.DUPLICATE);
      long tickets = jdbc.queryForObject("SELECT count(*) FROM converge_ticket WHERE message_id = ?", Long.class,
          failingId);
      long parked = jdbc.queryForObject("SELECT count(*) FROM converge_dlq WHERE message_id = ?", Long.class,
          failingId);
      if (expected == Outcome.BUSINESS_FAILURE) {
        assertThat(hooks).hasValue(1);
        assertThat(tickets + parked).isZero();
      } else {
        assertThat(hooks).hasValue(0);
        assertThat(tickets).isEqualTo(1);
        assertThat(parked).isEqualTo(1);
      }
    }
  }
}
