package io.converge.consumer.spring;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.Outcome;
import io.converge.consumer.spi.ConsumerBinding;
import io.converge.core.MessageSignature;
import io.converge.core.SigningKeys;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.BusinessException;
import io.converge.consumer.ConsumerOps;
import io.converge.consumer.IdempotentConsumer;
import io.converge.consumer.IncomingMessage;
import io.converge.core.Envelope;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/** The auto-configuration on the real broker and database: annotation scanning and Spring-joined transactions. */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class IdempotentConsumerAutoConfigurationIT {

  /** A user's Spring bean. */
  static class PaymentListener {

    final JdbcTemplate jdbc;
    final AtomicInteger runs = new AtomicInteger();

    PaymentListener(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @IdempotentConsumer(topic = "${test.topic}", group = "${test.group}", policy = "payments")
    public void onPayment(IncomingMessage message) {
      runs.incrementAndGet();
      // a plain JdbcTemplate write: it must join the dedup transaction
      jdbc.update("INSERT INTO spring_ledger (message_id, body) VALUES (?, ?)", message.envelopeMessageId(),
          message.payloadAsString());
      if (message.payloadAsString().contains("reject")) {
        throw new BusinessException("REJECTED", "rejected by the test");
      }
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class App {

    @Bean
    JdbcTemplate jdbcTemplate(DataSource ds) {
      return new JdbcTemplate(ds);
    }

    @Bean
    PaymentListener paymentListener(JdbcTemplate jdbc) {
      return new PaymentListener(jdbc);
    }
  }

  @Test
  void annotatedMethodIsSubscribedDeduplicatedAndJoinsTheTransaction(EmbeddedRocketMQ mq, DataSource ds)
      throws Exception {
    String topic = RocketMQExtension.uniqueTopic("spring");
    String group = RocketMQExtension.uniqueTopic("spring-group");
    mq.createTopic(topic);
    new JdbcTemplate(ds)
        .execute("CREATE TABLE IF NOT EXISTS spring_ledger (id BIGSERIAL PRIMARY KEY, message_id TEXT, body TEXT)");
    DefaultMQProducer producer = new DefaultMQProducer(RocketMQExtension.uniqueTopic("spring-producer"));
    producer.setNamesrvAddr(mq.nameServerAddress());
    producer.setInstanceName(UUID.randomUUID().toString());
    producer.start();
    try {
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(ConvergeConsumerAutoConfiguration.class))
          .withBean(DataSource.class, () -> ds)
          .withUserConfiguration(App.class)
          .withPropertyValues("test.topic=" + topic, "test.group=" + group,
              "converge.consumer.rocketmq.name-server=" + mq.nameServerAddress(),
              "converge.consumer.policies.payments.max-attempts=2",
              "converge.consumer.dedup.retention=3d")
          .run(context -> {
            assertThat(context).hasNotFailed();
            PaymentListener listener = context.getBean(PaymentListener.class);
            String ok = UUID.randomUUID().toString();
            String rejected = UUID.randomUUID().toString();
            for (int i = 0; i < 3; i++) {
              send(producer, topic, ok, "{\"pay\":1}");
              send(producer, topic, rejected, "{\"reject\":true}");
            }
            JdbcTemplate jdbc = new JdbcTemplate(ds);
            await().atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM converge_dedup WHERE consumer_group = ?", Long.class, group) == 2);
            // a stray duplicate of the ok message would show up as a second ledger row within this window
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM spring_ledger WHERE message_id = ?", Long.class, ok) == 1);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM spring_ledger WHERE message_id = ?", Long.class, ok))
                .isEqualTo(1);
            // the rejected message's JdbcTemplate insert was rolled back with the dedup transaction
            assertThat(
                jdbc.queryForObject("SELECT count(*) FROM spring_ledger WHERE message_id = ?", Long.class, rejected))
                .isZero();
            assertThat(
                jdbc.queryForObject("SELECT outcome FROM converge_dedup WHERE message_id = ?", String.class, rejected))
                .isEqualTo("BUSINESS_FAILURE");
            // the ok message ran once; a copy of the rejected one may run again after the first one's rollback
            // released the claim (issue 13.1), but its refusal is recorded once
            assertThat(listener.runs.get()).isBetween(2, 4);
            assertThat(context).hasSingleBean(ConsumerOps.class);
            assertThat(context.getBean(io.converge.consumer.DedupPurger.class).retention())
                .isEqualTo(Duration.ofDays(3));
          });
    } finally {
      producer.shutdown();
    }
  }

  @Test
  void aConsumerBindingBeanReplacesRocketMQ(DataSource ds) {
    String topic = RocketMQExtension.uniqueTopic("bound");
    String group = RocketMQExtension.uniqueTopic("bound-group");
    new JdbcTemplate(ds)
        .execute("CREATE TABLE IF NOT EXISTS spring_ledger (id BIGSERIAL PRIMARY KEY, message_id TEXT, body TEXT)");
    java.util.Map<String, io.converge.consumer.IdempotentHandler> subscribed = new java.util.concurrent.ConcurrentHashMap<>();
    AtomicInteger closed = new AtomicInteger();
    io.converge.consumer.spi.ConsumerBinding binding = (t, handler) -> {
      subscribed.put(t, handler);
      return closed::incrementAndGet;
    };
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(ConvergeConsumerAutoConfiguration.class))
        .withBean(DataSource.class, () -> ds)
        .withBean(io.converge.consumer.spi.ConsumerBinding.class, () -> binding)
        .withUserConfiguration(App.class)
        // no converge.consumer.rocketmq.name-server: the binding bean is the transport
        .withPropertyValues("test.topic=" + topic, "test.group=" + group)
        .run(context -> {
          assertThat(context).hasNotFailed();
          io.converge.consumer.IdempotentHandler handler = subscribed.get(topic);
          assertThat(handler).isNotNull();
          assertThat(handler.group()).isEqualTo(group);
          String id = UUID.randomUUID().toString();
          IncomingMessage m = IncomingMessage.builder().topic(topic).header(Envelope.MESSAGE_ID, id)
              .payload("{\"pay\":2}").build();
          assertThat(handler.handle(m)).isEqualTo(io.converge.consumer.Outcome.PROCESSED);
          assertThat(handler.handle(m)).isEqualTo(io.converge.consumer.Outcome.DUPLICATE);
          assertThat(context.getBean(PaymentListener.class).runs).hasValue(1);
        });
    assertThat(closed).hasValue(1);
  }

  private static final String OLD_SECRET = "an old secret of at least thirty-two bytes";
  private static final String NEW_SECRET = "the new secret, also thirty-two bytes or more";

  /** A message of {@code key} on {@code topic} created at {@code createdAt}, signed with {@code keys} unless null. */
  private static IncomingMessage message(String topic, SigningKeys keys, String key, Instant createdAt,
      String schema) {
    Map<String, String> h = new LinkedHashMap<>();
    h.put(Envelope.MESSAGE_ID, UUID.randomUUID().toString());
    h.put(Envelope.KEY, key);
    h.put(Envelope.CREATED_AT, Long.toString(createdAt.toEpochMilli()));
    h.put(Envelope.SCHEMA, schema);
    byte[] payload = "{\"pay\":3}".getBytes(StandardCharsets.UTF_8);
    if (keys != null) {
      h.put(Envelope.SIGNATURE, MessageSignature.sign(keys, topic, h, payload));
    }
    return IncomingMessage.builder().topic(topic).headers(h).brokerKey(key).payload(payload).build();
  }

  @Test
  void signingReplayAndSchemaPropertiesAreEveryHandlersEnvelopeRules(DataSource ds) throws Exception {
    String topic = RocketMQExtension.uniqueTopic("rules");
    String group = RocketMQExtension.uniqueTopic("rules-group");
    new JdbcTemplate(ds)
        .execute("CREATE TABLE IF NOT EXISTS spring_ledger (id BIGSERIAL PRIMARY KEY, message_id TEXT, body TEXT)");
    Map<String, IdempotentHandler> subscribed = new ConcurrentHashMap<>();
    // converge-core's auto-configuration is package-private, as every auto-configuration: named as its imports do
    Class<?> signing = Class.forName("io.converge.core.spring.ConvergeSigningAutoConfiguration");
    ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(signing, ConvergeConsumerAutoConfiguration.class))
        .withBean(DataSource.class, () -> ds)
        .withBean(ConsumerBinding.class, () -> (t, handler) -> {
          subscribed.put(t, handler);
          return () -> {
          };
        })
        .withUserConfiguration(App.class)
        .withPropertyValues("test.topic=" + topic, "test.group=" + group);
    runner.withPropertyValues("converge.consumer.require-signature=true").run(context -> assertThat(context)
        .getFailure().rootCause().hasMessageContaining("converge.consumer.require-signature=true needs a SigningKeys"));

    // a rotation in progress: k2 signs, k1 still verifies
    SigningKeys oldKey = SigningKeys.of("k1", Map.of("k1", OLD_SECRET.getBytes(StandardCharsets.UTF_8)));
    SigningKeys forger = SigningKeys.of("k2", Map.of("k2", "a forger's key of thirty-two bytes or more"
        .getBytes(StandardCharsets.UTF_8)));
    runner.withPropertyValues("converge.signing.current-key-id=k2", "converge.signing.secrets.k1=" + OLD_SECRET,
        "converge.signing.secrets.k2=" + NEW_SECRET, "converge.consumer.require-signature=true",
        "converge.consumer.replay-window.max-age=1h", "converge.consumer.replay-window.clock-skew=1m",
        "converge.consumer.accept-schema.payment=1,3").run(context -> {
          assertThat(context).hasNotFailed();
          IdempotentHandler h = subscribed.get(topic);
          Instant now = Instant.now();
          assertThat(h.handle(message(topic, oldKey, "a", now, "payment/1.4"))).as("signed with an active key")
              .isEqualTo(Outcome.PROCESSED);
          assertThat(h.handle(message(topic, oldKey, "b", now, "payment/3.0"))).isEqualTo(Outcome.PROCESSED);
          IncomingMessage unsigned = message(topic, null, "c", now, "payment/1.0");
          IncomingMessage forged = message(topic, forger, "d", now, "payment/1.0");
          IncomingMessage unread = message(topic, oldKey, "e", now, "payment/2.0");
          IncomingMessage stale = message(topic, oldKey, "f", now.minus(Duration.ofHours(2)), "payment/1.0");
          for (IncomingMessage m : List.of(unsigned, forged, unread, stale)) {
            assertThat(h.handle(m)).isEqualTo(Outcome.DEAD_LETTERED);
          }
          JdbcTemplate jdbc = new JdbcTemplate(ds);
          assertThat(jdbc.queryForList("SELECT reason_code FROM converge_dlq WHERE consumer_group = ? ORDER BY id",
              String.class, group)).containsExactly("SIGNATURE_INVALID", "SIGNATURE_INVALID", "SCHEMA_UNSUPPORTED",
                  "REPLAYED");
          assertThat(context.getBean(PaymentListener.class).runs).hasValue(2);
        });
  }

  @Test
  void invalidRetentionFailsTheContextNamingTheProperty(DataSource ds) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(ConvergeConsumerAutoConfiguration.class))
        .withBean(DataSource.class, () -> ds)
        .withPropertyValues("converge.consumer.dedup.retention=1h")
        .run(context -> assertThat(context).getFailure().rootCause()
            .hasMessageContaining("converge.consumer.dedup.retention must be at least PT6H"));
  }

  private static void send(DefaultMQProducer producer, String topic, String id, String body) throws Exception {
    Message m = new Message(topic, "*", "k", body.getBytes(StandardCharsets.UTF_8));
    m.putUserProperty(Envelope.MESSAGE_ID, id);
    producer.send(m);
  }
}
