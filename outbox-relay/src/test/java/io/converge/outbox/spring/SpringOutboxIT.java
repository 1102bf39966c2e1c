package io.converge.outbox.spring;

import static io.converge.producer.testing.SpringPublishing.message;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.OutboxRelay;
import io.converge.core.Envelope;
import io.converge.producer.TxnProducer;
import io.converge.producer.spring.TransactionalPublisher;
import io.converge.producer.testing.SpringPublishing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * With {@code converge.producer.mode=outbox}, Boot wires the outbox producer, the publisher that joins
 * Spring transactions and a started relay: a committed Spring transaction's message is delivered, a
 * rolled-back one's never is, and the relay counts into the application's MeterRegistry.
 */
@ExtendWith(RocketMQExtension.class)
class SpringOutboxIT {

  private static ApplicationContextRunner runner(DataSource db, String group, String... properties) {
    return SpringPublishing.runner(db, OutboxAutoConfiguration.class)
        .withPropertyValues("converge.producer.mode=outbox", "converge.producer.group=" + group)
        .withPropertyValues(properties);
  }

  @Test
  void outageBackoffMaxIsConfigurableAndValidated(EmbeddedRocketMQ mq) {
    DataSource db = ConvergePostgres.shared().newSchema("springbackoff");
    ApplicationContextRunner runner = runner(db, "spring-backoff",
        "converge.outbox.name-server=" + mq.nameServerAddress());
    runner.withPropertyValues("converge.outbox.outage-backoff-max=5s")
        .run(context -> assertThat(context).hasNotFailed().hasSingleBean(OutboxRelay.class));
    runner.withPropertyValues("converge.outbox.outage-backoff-max=100ms")
        .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
            .hasMessageContaining("relay.brokerBackoffMax").hasMessageContaining("PT0.1S"));
  }

  /**
   * Issue 14: outbox mode maps {@code converge.producer.*} like the other modes ({@code topics} and
   * {@code log-retention} are validated, not ignored) and counts into the application's MeterRegistry.
   */
  @Test
  void producerPropertiesAndMetricsApplyInOutboxMode(EmbeddedRocketMQ mq) throws Exception {
    DataSource db = ConvergePostgres.shared().newSchema("springoutboxprops");
    ApplicationContextRunner runner = runner(db, "spring-props", "converge.outbox.relay-enabled=false");
    runner.withPropertyValues("converge.producer.topics=no such topic")
        .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
            .hasMessageContaining("producer.topics").hasMessageContaining("no such topic"));
    runner.withPropertyValues("converge.producer.log-retention=1m")
        .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
            .hasMessageContaining("producer.logRetention").hasMessageContaining("PT1M"));
    runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(context -> {
          assertThat(context).hasNotFailed();
          SpringPublishing.of(context, db).committed(message("orders", "o-1", "x"));
          assertThat(
              context.getBean(MeterRegistry.class).get("txn.pending").tag("group", "spring-props").gauge().value())
              .isZero();
        });
    // converge.producer.sign with the keys of converge.signing.*: the stored row carries the current key's signature
    runner.withPropertyValues("converge.producer.sign=true").run(context -> assertThat(context).hasFailed()
        .getFailure().rootCause().hasMessageContaining("converge.producer.sign=true needs a SigningKeys bean"));
    runner.withConfiguration(AutoConfigurations.of(Class.forName(
        "io.converge.core.spring.ConvergeSigningAutoConfiguration"))) // package-private, as every auto-configuration
        .withPropertyValues("converge.producer.sign=true", "converge.signing.current-key-id=k2",
            "converge.signing.secrets.k1=an old secret of at least thirty-two bytes",
            "converge.signing.secrets.k2=the new secret, also thirty-two bytes or more")
        .run(context -> {
          assertThat(context).hasNotFailed();
          String id = SpringPublishing.of(context, db).committed(message("orders", "o-2", "signed"));
          assertThat(new JdbcTemplate(db).queryForObject("SELECT header_values[array_position(header_names, ?)] FROM "
              + "converge_outbox WHERE message_id = ?", String.class, Envelope.SIGNATURE, id)).startsWith("v1:k2:");
        });
  }

  @Test
  void publisherJoinsTheSpringTransactionAndTheRelayDelivers(EmbeddedRocketMQ mq) throws Exception {
    String topic = RocketMQExtension.uniqueTopic("spring-outbox");
    mq.createTopic(topic);
    DataSource db = SpringPublishing.withOrders(ConvergePostgres.shared().newSchema("springoutbox"));
    runner(db, "spring-orders", "converge.outbox.name-server=" + mq.nameServerAddress(),
        "converge.outbox.batch-size=50")
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(context -> {
          assertThat(context).hasSingleBean(TxnProducer.class).hasSingleBean(TransactionalPublisher.class)
              .hasSingleBean(OutboxRelay.class);
          assertThat(context.getBean(TxnProducer.class).backend()).isEqualTo("outbox");
          SpringPublishing publishing = SpringPublishing.of(context, db);
          JdbcTemplate jdbc = new JdbcTemplate(db);
          try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
            String committed = publishing.committedWithOrder(message(topic, "o-1", "yes"));
            String rolledBack = publishing.rolledBack(message(topic, "o-2", "no"), true);
            consumer.await(m -> committed.equals(m.getUserProperty(Envelope.MESSAGE_ID)), 1, Duration.ofSeconds(30));
            String marker = publishing.committed(message(topic, "o-2", "m"));
            consumer.await(m -> marker.equals(m.getUserProperty(Envelope.MESSAGE_ID)), 1, Duration.ofSeconds(30));
            assertThat(consumer.received(m -> rolledBack.equals(m.getUserProperty(Envelope.MESSAGE_ID)))).isEmpty();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_outbox", Integer.class)).isEqualTo(2);
            assertThat(context.getBean(MeterRegistry.class).get("outbox.published").counter().count()).isEqualTo(2.0);
          }
        });
  }
}
