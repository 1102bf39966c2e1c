package io.converge.saga;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import java.util.List;
import javax.sql.DataSource;

/** The saga on RocketMQ half messages: every transition's command is a half message committed with it. */
class HalfMessageSagaEndToEndIT extends SagaEndToEndIT {

  @Override
  protected TxnProducer producer(DataSource ds, EmbeddedRocketMQ mq, List<String> topics, List<AutoCloseable> open) {
    return TxnProducer.builder().group(RocketMQExtension.uniqueTopic("saga")).dataSource(ds)
        .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics(topics.toArray(String[]::new)).build();
  }
}
