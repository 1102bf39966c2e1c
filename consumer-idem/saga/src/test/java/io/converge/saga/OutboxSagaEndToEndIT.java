package io.converge.saga;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.OutboxBackend;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.producer.TxnProducer;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/** The saga on the transactional outbox: a polling relay carries commands and replies to RocketMQ. */
class OutboxSagaEndToEndIT extends SagaEndToEndIT {

  @Override
  protected TxnProducer producer(DataSource ds, EmbeddedRocketMQ mq, List<String> topics, List<AutoCloseable> open) {
    OutboxRelay relay = OutboxRelay.builder().dataSource(ds)
        .sink(RocketMQSink.nameServer(mq.nameServerAddress()).group(RocketMQExtension.uniqueTopic("relay"))
            .sendTimeout(Duration.ofSeconds(1)).build())
        .brokerBackoff(Duration.ofMillis(100), Duration.ofSeconds(2)).build();
    relay.start();
    open.add(relay);
    return TxnProducer.builder().group(RocketMQExtension.uniqueTopic("saga")).dataSource(ds)
        .backend(OutboxBackend.outbox()).build();
  }
}
