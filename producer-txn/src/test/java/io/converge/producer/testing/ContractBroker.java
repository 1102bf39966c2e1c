package io.converge.producer.testing;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;

/** The broker a {@link TxnProducerContract} runs against: its topics and an outage of it. */
public interface ContractBroker {

  /** Creates {@code topic} (idempotent). */
  void createTopic(String topic);

  /** Makes the broker unavailable, keeping its data. */
  void stop();

  /** Makes the broker available again after {@link #stop()}. */
  void start();

  /** The embedded RocketMQ broker, stopped and started again on its store. */
  static ContractBroker rocketMQ(EmbeddedRocketMQ mq) {
    return new ContractBroker() {

      @Override
      public void createTopic(String topic) {
        mq.createTopic(topic);
      }

      @Override
      public void stop() {
        mq.stopBroker();
      }

      @Override
      public void start() {
        mq.startBroker();
      }
    };
  }
}
