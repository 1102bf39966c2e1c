package io.converge.producer.testing;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;

/**
 * A RocketMQ of a test's own whose brokers are all stopped: its name server runs with no broker registered and
 * routes no topic, RocketMQ's state during an outage (the name server drops a topic with its last broker: a topic
 * it knew answers "no route" exactly as one it never knew). For the "no route" tests of the backend and the sink.
 * Only the name server is started (a broker started only to be stopped cost each such test class about 10 s).
 * {@link #close()} stops it.
 *
 * @param mq the cluster, its broker not running
 * @param topic a topic name of the test's own, routed to no broker
 */
public record StoppedRocketMQ(EmbeddedRocketMQ mq, String topic) implements AutoCloseable {

  /** Starts a name server alone, with a unique topic named after {@code topicPrefix}. */
  public static StoppedRocketMQ withTopic(String topicPrefix) {
    EmbeddedRocketMQ mq = EmbeddedRocketMQ.builder().build().startWithoutBroker();
    return new StoppedRocketMQ(mq, RocketMQExtension.uniqueTopic(topicPrefix));
  }

  @Override
  public void close() {
    mq.close();
  }
}
