package io.converge.consumer.order;

import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import javax.sql.DataSource;

/**
 * Per-key order end to end on RocketMQ half messages: the {@code TxnProducer}'s RocketMQ backend publishes,
 * the RocketMQ binding consumes; the consumer is restarted mid-run (see {@link KeyOrderEndToEnd}).
 */
class RocketMQHalfMessageOrderIT extends RocketMQEndToEnd {

  @Override
  protected TxnProducer producer(DataSource db, String topic) {
    return TxnProducer.builder().group(RocketMQExtension.uniqueTopic("order-half")).dataSource(db)
        .backend(RocketMQBackend.nameServer(mq.nameServer())).topics(topic).build();
  }
}
