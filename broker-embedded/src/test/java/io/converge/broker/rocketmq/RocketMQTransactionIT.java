package io.converge.broker.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The embedded broker is a real RocketMQ: plain sends, and transactional messages with check-back. */
@ExtendWith(RocketMQExtension.class)
class RocketMQTransactionIT {

  // generous: awaits return as soon as the message is there; a loaded 2-core machine can be slow
  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  void sentMessageIsConsumed(EmbeddedRocketMQ mq) throws Exception {
    String topic = topic(mq, "plain");
    DefaultMQProducer producer = new DefaultMQProducer(RocketMQExtension.uniqueTopic("pg"));
    producer.setNamesrvAddr(mq.nameServerAddress());
    producer.start();
    try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
      assertThat(producer.send(new Message(topic, "hello".getBytes(UTF_8))).getSendStatus())
          .isEqualTo(SendStatus.SEND_OK);
      assertThat(new String(consumer.awaitCount(1, WAIT).get(0).getBody(), UTF_8)).isEqualTo("hello");
    } finally {
      producer.shutdown();
    }
  }

  @Test
  void committedIsVisibleAndRolledBackNeverIs(EmbeddedRocketMQ mq) throws Exception {
    String topic = topic(mq, "txn");
    TransactionMQProducer producer = txProducer(mq, RocketMQExtension.uniqueTopic("tg"), new Answer(null));
    try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
      producer.sendMessageInTransaction(new Message(topic, "no".getBytes(UTF_8)),
          LocalTransactionState.ROLLBACK_MESSAGE);
      producer.sendMessageInTransaction(new Message(topic, "yes".getBytes(UTF_8)),
          LocalTransactionState.COMMIT_MESSAGE);
      consumer.await(m -> body(m).equals("yes"), 1, WAIT);
      // past several check-back scans: a rolled-back half message must never surface
      Duration scans = mq.settings().transactionTimeout().plus(mq.settings().transactionCheckInterval())
          .multipliedBy(2);
      await("no rolled-back message").during(scans).atMost(scans.plusSeconds(5))
          .until(() -> consumer.received(m -> body(m).equals("no")).isEmpty());
      assertThat(consumer.received(m -> body(m).equals("no"))).isEmpty();
    } finally {
      producer.shutdown();
    }
  }

  @Test
  void unknownIsCheckedBackThenCommitted(EmbeddedRocketMQ mq) throws Exception {
    String topic = topic(mq, "unknown");
    Answer answer = new Answer(LocalTransactionState.COMMIT_MESSAGE);
    TransactionMQProducer producer = txProducer(mq, RocketMQExtension.uniqueTopic("tg"), answer);
    try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
      producer.sendMessageInTransaction(new Message(topic, "later".getBytes(UTF_8)), LocalTransactionState.UNKNOW);
      consumer.await(m -> body(m).equals("later"), 1, WAIT);
      assertThat(answer.checks.get()).isPositive();
    } finally {
      producer.shutdown();
    }
  }

  @Test
  void halfMessageOfADeadProducerIsCheckedBackThroughANewInstanceOfItsGroup(EmbeddedRocketMQ mq) throws Exception {
    String topic = topic(mq, "orphan");
    String group = RocketMQExtension.uniqueTopic("tg");
    TransactionMQProducer dying = txProducer(mq, group, new Answer(LocalTransactionState.UNKNOW));
    try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
      dying.sendMessageInTransaction(new Message(topic, "orphan".getBytes(UTF_8)), LocalTransactionState.UNKNOW);
      dying.shutdown();

      Answer heir = new Answer(LocalTransactionState.COMMIT_MESSAGE);
      TransactionMQProducer successor = txProducer(mq, group, heir);
      try {
        // a fresh instance that has sent nothing gets no check-back until it has registered
        successor.getDefaultMQProducerImpl().getMqClientFactory().updateTopicRouteInfoFromNameServer(topic);
        successor.getDefaultMQProducerImpl().getMqClientFactory().sendHeartbeatToAllBrokerWithLock();
        consumer.await(m -> body(m).equals("orphan"), 1, WAIT);
        assertThat(heir.checks.get()).isPositive();
      } finally {
        successor.shutdown();
      }
    }
  }

  private static String topic(EmbeddedRocketMQ mq, String prefix) {
    String topic = RocketMQExtension.uniqueTopic(prefix);
    mq.createTopic(topic);
    return topic;
  }

  private static String body(MessageExt m) {
    return new String(m.getBody(), UTF_8);
  }

  private static TransactionMQProducer txProducer(EmbeddedRocketMQ mq, String group, Answer answer) throws Exception {
    TransactionMQProducer producer = new TransactionMQProducer(group);
    producer.setNamesrvAddr(mq.nameServerAddress());
    producer.setInstanceName(UUID.randomUUID().toString());
    producer.setTransactionListener(answer);
    producer.start();
    return producer;
  }

  /** Answers the local transaction with the state passed as argument, and check-backs with a fixed one. */
  private static final class Answer implements TransactionListener {

    final LocalTransactionState onCheck;
    final AtomicInteger checks = new AtomicInteger();

    Answer(LocalTransactionState onCheck) {
      this.onCheck = onCheck;
    }

    @Override
    public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
      return (LocalTransactionState) arg;
    }

    @Override
    public LocalTransactionState checkLocalTransaction(MessageExt msg) {
      checks.incrementAndGet();
      return onCheck == null ? LocalTransactionState.UNKNOW : onCheck;
    }
  }
}
