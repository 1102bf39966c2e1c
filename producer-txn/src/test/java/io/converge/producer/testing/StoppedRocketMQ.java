package io.converge.producer.testing;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;

/**
 * A RocketMQ cluster of a test's own that knew {@code topic} and whose broker is stopped: its name server
 * has no broker registered, RocketMQ's state during an outage (every broker stopped or restarting). For
 * the "no route" tests of the backend and the sink. {@link #close()} stops the name server.
 *
 * @param mq the cluster, its broker stopped
 * @param topic the topic the cluster knew before its broker stopped
 */
public record StoppedRocketMQ(EmbeddedRocketMQ mq, String topic) implements AutoCloseable {

  /** Starts a cluster, creates a unique topic named after {@code topicPrefix}, then stops the broker. */
  public static StoppedRocketMQ withTopic(String topicPrefix) {
    EmbeddedRocketMQ mq = EmbeddedRocketMQ.builder().build().start();
    try {
      String topic = RocketMQExtension.uniqueTopic(topicPrefix);
      mq.createTopic(topic);
      mq.stopBroker();
      return new StoppedRocketMQ(mq, topic);
    } catch (RuntimeException | Error e) {
      mq.close();
      throw e;
    }
  }

  @Override
  public void close() {
    mq.close();
  }
}
