package io.converge.consumer.order;

import io.converge.outbox.OutboxRelay;
import io.converge.outbox.RelayFixture;
import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import javax.sql.DataSource;

/**
 * Per-key order end to end through the transactional outbox: two polling relays drain it at once into
 * RocketMQ (the RocketMQ sink), the RocketMQ binding consumes; mid-run one relay is stopped and started
 * again while the other keeps relaying (see {@link KeyOrderEndToEnd}).
 */
class OutboxTwoRelaysOrderIT extends RocketMQEndToEnd {

  private volatile OutboxRelay first;
  private volatile OutboxRelay second;

  @Override
  protected TxnProducer producer(DataSource db, String topic) {
    Migrations.apply(db, "outbox");
    return RelayFixture.producer(db);
  }

  @Override
  protected AutoCloseable carry(String topic) {
    Migrations.apply(ds, "outbox");
    first = relay("order-a");
    second = relay("order-b");
    return () -> {
      first.close();
      second.close();
    };
  }

  /** The second relay stops (finishing its batch) and a new one takes its place; the first relays on. */
  @Override
  protected void restartMidRun(Consumer consumer) {
    second.close();
    second = relay("order-b");
  }

  private static OutboxRelay relay(String name) {
    OutboxRelay relay = RelayFixture.relay(ds, RelayFixture.sink(mq.server()).build()).name(name).batchSize(8).build();
    relay.start();
    return relay;
  }
}
