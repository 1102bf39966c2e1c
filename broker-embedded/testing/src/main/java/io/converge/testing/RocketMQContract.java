package io.converge.testing;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link TxnProducerContract} for a backend whose messages arrive on RocketMQ (the half-message backend, or the
 * outbox relayed to RocketMQ): the JVM's shared {@link EmbeddedRocketMQ} as the contract's broker (topics, a
 * stop and restart as the outage), a pull consumer as its sink and the broker's address for the crash tests'
 * child JVM ({@code nameServer}). Subclasses provide the producer.
 */
@ExtendWith(RocketMQExtension.class)
public abstract class RocketMQContract extends TxnProducerContract {

  /** The JVM's shared broker, set before the first test. */
  protected static EmbeddedRocketMQ mq;

  /** See {@link TxnProducerContract#TxnProducerContract(Staging, Class)}. */
  protected RocketMQContract(Staging staging, Class<? extends ChildProducerFactory> childFactory) {
    super(staging, childFactory);
  }

  @BeforeAll
  static void rocketMQ(EmbeddedRocketMQ server) {
    mq = server;
  }

  @Override
  protected final ContractBroker broker() {
    return ContractBroker.rocketMQ(mq);
  }

  @Override
  protected final MessageSink consume(String topic) {
    return new RocketMQTopicSink(mq, topic);
  }

  @Override
  protected Map<String, String> childEnv() {
    return Map.of("nameServer", mq.nameServerAddress());
  }
}
