package io.converge.producer.rocketmq;

import io.converge.producer.TxnProducer;
import io.converge.testing.ChildProducerFactory;
import java.util.Map;
import javax.sql.DataSource;

/** Builds the RocketMQ producer under test, in the parent and in the crash tests' child JVM alike. */
public final class RocketMQChildFactory implements ChildProducerFactory {

  /** The local-transaction timeout of the tests: short, so that recovery is quick to observe. */
  static final java.time.Duration LOCAL_TX_TIMEOUT = java.time.Duration.ofSeconds(2);

  @Override
  public TxnProducer create(String group, String topic, DataSource db, Map<String, String> env) {
    return TxnProducer.builder()
        .group(group)
        .dataSource(db)
        .backend(RocketMQBackend.nameServer(env.get("nameServer")))
        .topics(topic)
        .localTransactionTimeout(LOCAL_TX_TIMEOUT)
        .build();
  }
}
