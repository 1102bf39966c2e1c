package io.converge.producer.rocketmq;

import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.TxnProducer;
import io.converge.producer.spi.TxnLog;
import io.converge.producer.testing.ChildProducerFactory;
import io.converge.producer.testing.ContractBroker;
import io.converge.producer.testing.MessageSink;
import io.converge.producer.testing.TxnProducerContract;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/** The shared contract, against the RocketMQ half-message backend on the embedded broker. */
@ExtendWith(RocketMQExtension.class)
class RocketMQTxnProducerIT extends TxnProducerContract {

  private static EmbeddedRocketMQ mq;

  @BeforeAll
  static void broker(EmbeddedRocketMQ server) {
    mq = server;
  }

  @Override
  protected TxnProducer newProducer(String group, String topic, DataSource db) {
    return new RocketMQChildFactory().create(group, topic, db, childEnv());
  }

  @Override
  protected ContractBroker broker() {
    return ContractBroker.rocketMQ(mq);
  }

  @Override
  protected MessageSink consume(String topic) {
    return new RocketMQSink(mq, topic);
  }

  @Override
  protected boolean reachesBrokerInUnitOfWork() {
    return true;
  }

  @Override
  protected Class<? extends ChildProducerFactory> childFactory() {
    return RocketMQChildFactory.class;
  }

  @Override
  protected Map<String, String> childEnv() {
    return Map.of("nameServer", mq.nameServerAddress());
  }

  @Override
  protected Duration recoveryWindow() {
    // local-transaction timeout, then the broker's next scans (every 500 ms, first after 1 s)
    return RocketMQChildFactory.LOCAL_TX_TIMEOUT.plusSeconds(4);
  }

  @Override
  protected void awaitDiscarded(String id) {
    TxnLog log = new TxnLog(db);
    await("a check-back rolled back message " + id).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
        .until(() -> log.outcome(id) == TxnLog.Outcome.ROLLED_BACK);
  }
}
