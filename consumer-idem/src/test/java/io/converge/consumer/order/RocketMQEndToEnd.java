package io.converge.consumer.order;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.producer.Envelope;
import io.converge.producer.rocketmq.RocketMQClients;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/** The order tests' RocketMQ side: the topic, the RocketMQ binding as consumer and a raw producer for the copies. */
@ExtendWith(RocketMQExtension.class)
abstract class RocketMQEndToEnd extends KeyOrderEndToEnd {

  /** The broker (shared by the JVM's tests). */
  protected static EmbeddedRocketMQ mq;
  private static DefaultMQProducer raw;

  @BeforeAll
  static void broker(EmbeddedRocketMQ server) throws Exception {
    mq = server;
    raw = RocketMQClients.startProducer(mq.nameServerAddress(), RocketMQExtension.uniqueTopic("order-raw"));
  }

  @AfterAll
  static void stopRaw() {
    if (raw != null) {
      raw.shutdown();
    }
  }

  @Override
  protected String newTopic(String prefix) {
    String topic = RocketMQExtension.uniqueTopic(prefix);
    mq.createTopic(topic);
    return topic;
  }

  @Override
  protected AutoCloseable consume(String topic, IdempotentHandler handler) {
    return RocketMQIdempotentConsumer.builder().nameServer(mq.nameServerAddress()).topic(topic).handler(handler)
        .consumeThreads(8).start();
  }

  @Override
  protected void republish(String topic, IncomingMessage delivered) throws Exception {
    Message m = new Message(topic, "*", delivered.header(Envelope.KEY), delivered.payload());
    delivered.headers().forEach(m::putUserProperty);
    assertThat(raw.send(m).getSendStatus()).isEqualTo(SendStatus.SEND_OK);
  }
}
