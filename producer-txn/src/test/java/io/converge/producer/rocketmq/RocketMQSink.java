package io.converge.producer.rocketmq;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.producer.Envelope;
import io.converge.producer.testing.Delivered;
import io.converge.producer.testing.MessageSink;
import java.util.List;
import java.util.Map;

/** A {@link MessageSink} on a RocketMQ topic. */
final class RocketMQSink implements MessageSink {

  private final RecordingConsumer consumer;

  RocketMQSink(EmbeddedRocketMQ mq, String topic) {
    this.consumer = RecordingConsumer.start(mq, topic);
  }

  @Override
  public List<Delivered> received() {
    return consumer.received().stream()
        .map(m -> new Delivered(m.getUserProperty(Envelope.MESSAGE_ID), m.getUserProperty(Envelope.KEY),
            Map.copyOf(m.getProperties()), m.getBody()))
        .toList();
  }

  @Override
  public void close() {
    consumer.close();
  }
}
