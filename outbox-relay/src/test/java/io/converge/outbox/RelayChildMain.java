package io.converge.outbox;

import io.converge.broker.child.ChildJvm;
import io.converge.outbox.rocketmq.RocketMQSink;
import javax.sql.DataSource;

/**
 * A relay process for the kill -9 test: drains the outbox of the given schema into RocketMQ and halts
 * the JVM ({@code Runtime.halt}, like kill -9) inside a batch, right after its N-th successful send and
 * before the batch is marked published. Exits 3 if it never got there.
 */
public final class RelayChildMain {

  static final String HALTING = "RELAY-HALTING-AFTER-SEND ";

  private RelayChildMain() {
  }

  public static void main(String[] args) throws Exception {
    DataSource db = ChildJvm.database();
    int haltAfter = Integer.parseInt(System.getProperty("relay.haltAfter"));
    HaltingSink halting = new HaltingSink(
        RocketMQSink.nameServer(System.getProperty("relay.nameServer")).group("relay-child").build(),
        haltAfter, HALTING);
    OutboxRelay relay = OutboxRelay.builder().name("child").dataSource(db).sink(halting).batchSize(50).build();
    relay.start();
    Thread.sleep(60_000);
    System.out.println("RELAY-COMPLETED without halting, sent " + halting.sent());
    relay.close();
    System.exit(3);
  }
}
