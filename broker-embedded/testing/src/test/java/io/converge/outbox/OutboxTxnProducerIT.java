package io.converge.outbox;

import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.producer.TxnProducer;
import io.converge.testing.RocketMQContract;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;

/**
 * The shared contract, against the outbox backend and a polling relay (in this JVM) publishing to the
 * embedded RocketMQ. The crash tests' child JVM only writes the outbox; the relay here delivers.
 */
class OutboxTxnProducerIT extends RocketMQContract {

  private OutboxRelay relay;

  OutboxTxnProducerIT() {
    super(Staging.DATABASE, OutboxChildFactory.class);
  }

  @AfterEach
  void stopRelay() {
    if (relay != null) {
      relay.close();
      relay = null;
    }
  }

  @Override
  protected TxnProducer newProducer(String group, String topic, DataSource ds) {
    if (ds != db) {
      // an unreachable database (the DB-down case): no migration, no relay
      return TxnProducer.builder().group(group).dataSource(ds).backend(OutboxBackend.outbox()).build();
    }
    migrateOnce(db, "outbox");
    TxnProducer p = OutboxChildFactory.producer(group, topic, ds);
    if (relay == null) {
      relay = OutboxRelay.builder().dataSource(db)
          .sink(RocketMQSink.nameServer(mq.nameServerAddress())
              .group("relay-" + UUID.randomUUID().toString().substring(0, 8))
              .sendTimeout(Duration.ofSeconds(1)).build())
          .brokerBackoff(Duration.ofMillis(100), Duration.ofSeconds(2))
          .build();
      relay.start();
    }
    return p;
  }

  @Override
  protected Duration recoveryWindow() {
    // the relay's next polls (idle at most 200 ms), plus the consumer's pull
    return Duration.ofSeconds(2);
  }

  @Override
  protected void awaitDiscarded(String id) {
    throw new UnsupportedOperationException(
        "the outbox never discards a message: the contract runs case 5b instead of 5");
  }
}
