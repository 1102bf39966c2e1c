package io.converge.pulsar.spring;

import static io.converge.producer.testing.SpringPublishing.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.spi.ConsumerBinding;
import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import io.converge.producer.spring.TransactionalPublisher;
import io.converge.producer.testing.SpringPublishing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * {@code converge.producer.mode=pulsar} in a Spring context on the embedded Pulsar and PostgreSQL: a
 * {@code @Transactional}-style publish is delivered when the transaction commits and never when it rolls
 * back, through the auto-configured Pulsar {@link ConsumerBinding} and an idempotent handler.
 */
@ExtendWith(PulsarExtension.class)
class PulsarAutoConfigurationIT {

  @Test
  void publishJoinsTheSpringTransactionAndTheBindingDeliversIt(EmbeddedPulsar pulsar) throws Exception {
    String full = PulsarExtension.uniqueTopic("spring");
    String topic = full.substring(full.lastIndexOf('/') + 1);
    DataSource db = SpringPublishing.withOrders(ConvergePostgres.shared().newSchema("pulsar_spring"));
    Migrations.apply(db, "consumer");
    JdbcTemplate jdbc = new JdbcTemplate(db);
    jdbc.execute("CREATE TABLE received (message_id text, payload text)");
    runner(pulsar, topic, db)
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(context -> {
          assertThat(context).hasSingleBean(TxnProducer.class).hasSingleBean(TransactionalPublisher.class)
              .hasSingleBean(ConsumerBinding.class);
          SpringPublishing publishing = SpringPublishing.of(context, db);
          IdempotentHandler handler = recording(db, "spring-" + UUID.randomUUID());
          try (ConsumerBinding.Subscription sub = context.getBean(ConsumerBinding.class).subscribe(topic, handler)) {
            String committed = publishing.committedWithOrder(message(topic, "o", "yes"));
            publishing.rolledBack(message(topic, "o", "no"), true);
            String marker = publishing.committed(message(topic, "o", "marker"));

            // one key, one consumer, in order: the marker arrives after anything published before it
            await().atMost(Duration.ofSeconds(60)).until(() -> jdbc
                .queryForObject("SELECT count(*) FROM received WHERE message_id = ?", Integer.class, marker) == 1);
            List<String> ids = jdbc.queryForList("SELECT message_id FROM received", String.class);
            assertThat(ids).containsExactlyInAnyOrder(committed, marker);
            assertThat(jdbc.queryForList("SELECT id FROM orders", String.class)).containsExactly(committed);
            // sends are timed when their acknowledgements are awaited, before the commit: the rolled-back one never is
            assertThat(context.getBean(MeterRegistry.class).get("txn.send.latency").timer().count())
                .isGreaterThanOrEqualTo(2);
            assertThat(context.getBean(MeterRegistry.class).find("txn.pulsar.open").gauge()).isNotNull();
          }
        });
  }

  @Test
  void aMissingServiceUrlOrABadValueFailsTheStartNamingIt(EmbeddedPulsar pulsar) {
    DataSource db = ConvergePostgres.shared().newSchema("pulsar_spring_bad");
    SpringPublishing.runner(db, PulsarAutoConfiguration.class)
        .withPropertyValues("converge.producer.mode=pulsar", "converge.producer.group=spring-bad")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("converge.pulsar.service-url is required"));
    runner(pulsar, "t", db).withPropertyValues("converge.pulsar.transaction-timeout=2s")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("pulsar.transactionTimeout must be at least the local-transaction timeout plus"));
    // consumer settings are checked when a subscription starts
    IdempotentHandler h = IdempotentHandler.builder().group("spring-bad").dataSource(db).handler((c, m) -> {
    }).build();
    runner(pulsar, "t", db).withPropertyValues("converge.pulsar.consumer.receiver-queue-size=0")
        .run(context -> assertThatThrownBy(() -> context.getBean(ConsumerBinding.class).subscribe("t", h))
            .hasMessageContaining("pulsar.receiverQueueSize must be between 1 and 10000, but was 0"));
  }

  @Test
  void otherModesAndDisabledConsumersBackOff(EmbeddedPulsar pulsar) {
    DataSource db = ConvergePostgres.shared().newSchema("pulsar_spring_off");
    runner(pulsar, "t", db).withPropertyValues("converge.producer.mode=outbox")
        .run(context -> assertThat(context).doesNotHaveBean(TxnProducer.class).doesNotHaveBean(ConsumerBinding.class));
    runner(pulsar, "t", db).withPropertyValues("converge.pulsar.consumer.enabled=false")
        .run(context -> assertThat(context).hasSingleBean(TxnProducer.class).doesNotHaveBean(ConsumerBinding.class));
  }

  @Test
  void outboxModeWithThePulsarSinkRelaysToPulsarAndConsumesFromIt(EmbeddedPulsar pulsar) throws Exception {
    String full = PulsarExtension.uniqueTopic("spring-outbox");
    String topic = full.substring(full.lastIndexOf('/') + 1);
    DataSource db = ConvergePostgres.shared().newSchema("pulsar_spring_outbox");
    Migrations.apply(db, "consumer");
    JdbcTemplate jdbc = new JdbcTemplate(db);
    jdbc.execute("CREATE TABLE received (message_id text, payload text)");
    outboxRunner(db)
        .withPropertyValues("converge.outbox.sink=pulsar", "converge.pulsar.service-url=" + pulsar.serviceUrl())
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(io.converge.outbox.spi.OutboxSink.class))
              .isInstanceOf(io.converge.pulsar.PulsarOutboxSink.class);
          assertThat(context).hasSingleBean(io.converge.outbox.OutboxRelay.class).hasSingleBean(ConsumerBinding.class);
          SpringPublishing publishing = SpringPublishing.of(context, db);
          IdempotentHandler handler = recording(db, "spring-outbox-" + UUID.randomUUID());
          try (ConsumerBinding.Subscription sub = context.getBean(ConsumerBinding.class).subscribe(topic, handler)) {
            publishing.rolledBack(message(topic, "o", "no"), false);
            String committed = publishing.committed(message(topic, "o", "yes"));
            await().atMost(Duration.ofSeconds(60)).until(() -> jdbc
                .queryForObject("SELECT count(*) FROM received WHERE message_id = ?", Integer.class, committed) == 1);
            // a while later still only the committed one (nothing else was on its way)
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                .until(() -> jdbc.queryForObject("SELECT count(*) FROM received", Integer.class) == 1);
            assertThat(jdbc.queryForList("SELECT message_id FROM received", String.class)).containsExactly(committed);
            assertThat(
                jdbc.queryForObject("SELECT count(*) FROM converge_outbox WHERE published_at IS NULL", Integer.class))
                .isZero();
          }
        });
  }

  @Test
  void anOutboxSinkThatCannotBeMadeFailsTheStartNamingIt() {
    DataSource db = ConvergePostgres.shared().newSchema("pulsar_spring_outbox_bad");
    outboxRunner(db).withPropertyValues("converge.outbox.sink=pulsar")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("converge.pulsar.service-url is required"));
    outboxRunner(db).withPropertyValues("converge.outbox.sink=kafka")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("converge.outbox.sink must be rocketmq or pulsar, but was kafka"));
  }

  /** A handler of {@code group} that records each message's id and payload in {@code received}. */
  private static IdempotentHandler recording(DataSource db, String group) {
    return IdempotentHandler.builder().group(group).dataSource(db)
        .handler((c, m) -> {
          try (var ps = c.prepareStatement("INSERT INTO received VALUES (?, ?)")) {
            ps.setString(1, m.envelopeMessageId());
            ps.setString(2, m.payloadAsString());
            ps.executeUpdate();
          }
        }).build();
  }

  private static ApplicationContextRunner outboxRunner(DataSource db) {
    try {
      return SpringPublishing.runner(db, PulsarOutboxAutoConfiguration.class,
          Class.forName("io.converge.outbox.spring.OutboxAutoConfiguration"))
          .withPropertyValues("converge.producer.mode=outbox", "converge.producer.group=spring-outbox");
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }

  private static ApplicationContextRunner runner(EmbeddedPulsar pulsar, String topic, DataSource db) {
    return SpringPublishing.runner(db, PulsarAutoConfiguration.class)
        .withPropertyValues("converge.producer.mode=pulsar", "converge.producer.group=spring-pulsar",
            "converge.producer.topics=" + topic, "converge.producer.local-transaction-timeout=5s",
            "converge.pulsar.service-url=" + pulsar.serviceUrl(), "converge.pulsar.recovery-interval=1s",
            "converge.pulsar.consumer.consumers=2", "converge.pulsar.consumer.redelivery-delay=200ms",
            "converge.pulsar.consumer.receiver-queue-size=10");
  }
}
