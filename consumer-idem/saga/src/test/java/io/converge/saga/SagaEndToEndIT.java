package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.producer.TxnProducer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The order saga end to end on the embedded RocketMQ: commands and replies published by a backend's
 * {@link TxnProducer}, consumed by the RocketMQ binding, the coordinator polling on its own thread. One subclass per
 * backend.
 */
@ExtendWith(RocketMQExtension.class)
abstract class SagaEndToEndIT {

  /** The backend's producer on {@code ds} for {@code topics}, and what carries its messages (a relay), if anything. */
  protected abstract TxnProducer producer(DataSource ds, EmbeddedRocketMQ mq, List<String> topics,
      List<AutoCloseable> open) throws Exception;

  @Test
  void completesAndCompensatesThroughTheBroker(EmbeddedRocketMQ mq) throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("saga_e2e");
    OrderSaga.migrate(ds);
    String prefix = RocketMQExtension.uniqueTopic("s") + "-";
    List<String> topics = new ArrayList<>(List.of(prefix + OrderSaga.REPLIES));
    for (String p : List.of("inventory", "account", "shipping")) {
      topics.add(prefix + p + "-cmd");
      topics.add(prefix + p + "-comp");
    }
    topics.forEach(mq::createTopic);
    List<AutoCloseable> open = new ArrayList<>();
    try {
      TxnProducer producer = producer(ds, mq, topics, open);
      open.add(producer);
      // patient steps: a RocketMQ consumer started beside others can get no message for 20-30 s (its rebalance's
      // heartbeat skipped, pulls refused until the next periodic one: apache/rocketmq#3434); with 5 s steps its three
      // sends timed out and the compensation was ticketed. What this test proves is the flow through the broker, not
      // the timeouts (SagaCoordinatorIT, SagaOpsIT).
      OrderSaga saga = new OrderSaga(ds, producer, prefix, null, b -> b.pollInterval(Duration.ofMillis(200)),
          java.util.Set.of(), Duration.ofSeconds(15), Duration.ofMinutes(3));
      open.add(saga.coordinator);
      consume(mq, prefix + OrderSaga.REPLIES, saga.coordinator.replyHandler(), open);
      for (Map.Entry<String, IdempotentHandler> p : saga.participants.entrySet()) {
        consume(mq, p.getKey(), p.getValue(), open);
      }
      saga.coordinator.startPolling();

      saga.start("paid", "");
      saga.start("refused", ",\"refuse\":\"ship\"");

      try {
        await().atMost(Duration.ofSeconds(150)).until(() -> "COMPLETED".equals(saga.state("paid"))
            && "COMPENSATED".equals(saga.state("refused")));
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        throw new AssertionError("paid: " + saga.state("paid") + " " + saga.events("paid") + " " + saga.effects("paid")
            + "; refused: " + saga.state("refused") + " " + saga.events("refused") + " " + saga.effects("refused")
            + "; saga rows: " + saga.list("SELECT id || ' ' || state || ' ' || step || ' ' || coalesce(last_error, '')"
                + " FROM converge_saga")
            + "; dlq: " + saga.list("SELECT topic || ' ' || reason FROM converge_dlq"), e);
      }
      assertThat(saga.effects("paid")).containsExactly("reserve forward", "debit forward", "ship forward",
          "mark-paid forward");
      assertThat(saga.effects("refused")).containsExactly("reserve forward", "debit forward", "debit compensate",
          "reserve compensate");
    } finally {
      for (int i = open.size() - 1; i >= 0; i--) {
        open.get(i).close();
      }
    }
  }

  private static void consume(EmbeddedRocketMQ mq, String topic, IdempotentHandler handler,
      List<AutoCloseable> open) {
    open.add(RocketMQIdempotentConsumer.builder().nameServer(mq.nameServerAddress()).topic(topic)
        .group(RocketMQExtension.uniqueTopic("g")).handler(handler).start());
  }
}
