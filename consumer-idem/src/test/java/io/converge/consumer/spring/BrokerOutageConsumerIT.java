package io.converge.consumer.spring;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.FailureKind;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.outage.CountingMetrics;
import io.converge.consumer.outage.OutageChecks;
import io.converge.consumer.rocketmq.RawRocketMQ;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.core.Migrations;
import io.converge.producer.spring.TransactionalPublisher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Issue 19.1 (b): the broker a handler publishes to (a RocketMQ of the test's own) is stopped for as
 * long as the failure policy's three attempts would take, then started again on the same store. The
 * handler's messages, arriving on the shared broker meanwhile, are each processed once after the outage
 * and their own messages delivered; nothing is parked or ticketed.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class BrokerOutageConsumerIT {

  @RegisterExtension
  static final RawRocketMQ raw = new RawRocketMQ();

  private static final Duration MAX_OUTAGE = Duration.ofSeconds(20);

  @Test
  void aHandlerWhosePublishMeetsAStoppedBrokerWaitsAndRunsOnceAfterIt(EmbeddedRocketMQ input, DataSource ds)
      throws Exception {
    Migrations.apply(ds, "consumer");
    Migrations.apply(ds, "producer");
    JdbcTemplate jdbc = new JdbcTemplate(ds);
    jdbc.execute("CREATE TABLE IF NOT EXISTS outage_ledger (message_id text NOT NULL)");
    String inTopic = RocketMQExtension.uniqueTopic("brout-in");
    String outTopic = RocketMQExtension.uniqueTopic("brout-out");
    String group = RocketMQExtension.uniqueTopic("brout-group");
    input.createTopic(inTopic);
    CountingMetrics metrics = new CountingMetrics();
    try (EmbeddedRocketMQ output = EmbeddedRocketMQ.builder().brokerName("outage-out").build().start()) {
      output.createTopic(outTopic);
      try (TxnProducer txn = TxnProducer.builder().group(RocketMQExtension.uniqueTopic("brout-txn")).dataSource(ds)
          .backend(RocketMQBackend.nameServer(output.nameServerAddress()).sendTimeout(Duration.ofSeconds(2)))
          .topics(outTopic).build();
          RecordingConsumer published = RecordingConsumer.start(output, outTopic)) {
        TransactionalPublisher publisher = new TransactionalPublisher(txn, ds);
        IdempotentHandler handler = IdempotentHandler.builder().group(group).metrics(metrics)
            .transactions(new SpringTransactionRunner(new DataSourceTransactionManager(ds), ds))
            .policy(
                FailurePolicy.defaults().withMaxAttempts(3).withBackoff(Duration.ofMillis(100), Duration.ofMillis(200))
                    .withMaxOutageBackoff(Duration.ofSeconds(1)))
            .handler((c, m) -> {
              jdbc.update("INSERT INTO outage_ledger VALUES (?)", m.envelopeMessageId());
              publisher.publish(OutgoingMessage.builder(outTopic).id(MessageIds.shared().next())
                  .header("cause", m.envelopeMessageId()).payload("done".getBytes(UTF_8)).build());
            }).build();
        List<String> ids = new ArrayList<>();
        try (RocketMQIdempotentConsumer consumer = RocketMQIdempotentConsumer.builder()
            .nameServer(input.nameServerAddress()).topic(inTopic).handler(handler).consumeThreads(2).start()) {
          ids.add(raw.sendNew(inTopic));
          published.await(m -> ids.get(0).equals(m.getUserProperty("cause")), 1, Duration.ofSeconds(60));

          // with main's behaviour both consumer threads would have used up their 3 attempts by then
          ids.addAll(OutageChecks.sendDuringOutage(output::stopBroker, output::startBroker, 5,
              () -> raw.sendNew(inTopic), metrics, MAX_OUTAGE, Duration.ofSeconds(10)));

          await().atMost(Duration.ofSeconds(90)).until(() -> jdbc.queryForObject(
              "SELECT count(*) FROM converge_dedup WHERE consumer_group = ?", Long.class, group) == ids.size());
          OutageChecks.assertAllProcessedNoneParked(jdbc, group);
          OutageChecks.assertOnceEach(ds, "outage_ledger", ids);
          for (String id : ids) {
            published.await(m -> id.equals(m.getUserProperty("cause")), 1, Duration.ofSeconds(60));
          }
          assertThat(metrics.failures(FailureKind.UNAVAILABLE)).isGreaterThanOrEqualTo(6);
          assertThat(metrics.failures(FailureKind.TECHNICAL)).isZero();
        }
      }
    }
  }
}
