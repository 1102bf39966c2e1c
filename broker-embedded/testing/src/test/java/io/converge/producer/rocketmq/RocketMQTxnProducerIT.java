package io.converge.producer.rocketmq;

import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.TxnLog;
import io.converge.testing.RocketMQContract;
import java.time.Duration;
import javax.sql.DataSource;

/** The shared contract, against the RocketMQ half-message backend on the embedded broker. */
class RocketMQTxnProducerIT extends RocketMQContract {

  RocketMQTxnProducerIT() {
    super(Staging.BROKER, RocketMQChildFactory.class);
  }

  @Override
  protected TxnProducer newProducer(String group, String topic, DataSource db) {
    return new RocketMQChildFactory().create(group, topic, db, childEnv());
  }

  @Override
  protected Duration recoveryWindow() {
    // a check-back answers UNKNOWN until the local-transaction timeout, then decides; the broker checks a half
    // message once it is older than its transaction timeout, on scans every check interval; then the
    // check-back's round trip and the delivery of a message it would commit
    EmbeddedRocketMQ.Settings broker = mq.settings();
    Duration firstDecision = RocketMQChildFactory.LOCAL_TX_TIMEOUT.compareTo(broker.transactionTimeout()) >= 0
        ? RocketMQChildFactory.LOCAL_TX_TIMEOUT
        : broker.transactionTimeout();
    return firstDecision.plus(broker.transactionCheckInterval()).plusSeconds(2);
  }

  @Override
  protected void awaitDiscarded(String id) {
    TxnLog log = new TxnLog(db);
    await("a check-back rolled back message " + id).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
        .until(() -> log.outcome(id) == TxnLog.Outcome.ROLLED_BACK);
  }
}
