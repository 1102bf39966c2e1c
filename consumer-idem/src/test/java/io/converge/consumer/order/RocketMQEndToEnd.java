package io.converge.consumer.order;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.rocketmq.RawRocketMQ;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.core.Envelope;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The order tests' RocketMQ side: the topic, the RocketMQ binding as consumer and a raw producer for the copies. */
@ExtendWith(RocketMQExtension.class)
abstract class RocketMQEndToEnd extends KeyOrderEndToEnd {

  /** The broker (shared by the JVM's tests) and the raw producer. */
  @RegisterExtension
  protected static final RawRocketMQ mq = new RawRocketMQ();

  @Override
  protected String newTopic(String prefix) {
    return mq.newTopic(prefix);
  }

  @Override
  protected AutoCloseable consume(String topic, IdempotentHandler handler) {
    return RocketMQIdempotentConsumer.builder().nameServer(mq.nameServer()).topic(topic).handler(handler)
        .consumeThreads(8).start();
  }

  @Override
  protected void republish(String topic, IncomingMessage delivered) throws Exception {
    Message m = new Message(topic, "*", delivered.header(Envelope.KEY), delivered.payload());
    delivered.headers().forEach(m::putUserProperty);
    assertThat(mq.send(m).getSendStatus()).isEqualTo(SendStatus.SEND_OK);
  }
}
