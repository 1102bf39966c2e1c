package io.converge.testing;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import java.util.function.Consumer;

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
    return of(mq::createTopic, mq::stopBroker, mq::startBroker);
  }

  /** A broker whose topics {@code createTopic} creates, {@code stop} makes unavailable and {@code start} available. */
  static ContractBroker of(Consumer<String> createTopic, Runnable stop, Runnable start) {
    return new ContractBroker() {

      @Override
      public void createTopic(String topic) {
        createTopic.accept(topic);
      }

      @Override
      public void stop() {
        stop.run();
      }

      @Override
      public void start() {
        start.run();
      }
    };
  }
}
