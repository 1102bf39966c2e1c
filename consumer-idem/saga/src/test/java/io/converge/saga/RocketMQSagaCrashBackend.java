package io.converge.saga;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/** RocketMQ half messages for {@link SagaCrashContract}; {@code env} holds {@code nameServer}. */
public final class RocketMQSagaCrashBackend implements SagaCrashBackend {

  @Override
  public TxnProducer producer(String group, DataSource ds, List<String> topics, Map<String, String> env) {
    return TxnProducer.builder().group(group).dataSource(ds).backend(RocketMQBackend.nameServer(env.get("nameServer")))
        .topics(topics.toArray(String[]::new)).build();
  }

  @Override
  public AutoCloseable consume(String topic, String group, IdempotentHandler handler, Map<String, String> env) {
    return RocketMQIdempotentConsumer.builder().nameServer(env.get("nameServer")).topic(topic).group(group)
        .handler(handler).start();
  }
}
