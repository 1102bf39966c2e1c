package io.converge.outbox.cdc;

import io.converge.outbox.HaltingSink;
import io.converge.outbox.rocketmq.RocketMQSink;
import java.time.Duration;

/**
 * A CDC relay process for the crash test: relays into RocketMQ and halts the JVM
 * ({@code Runtime.halt}, like kill -9) right after its N-th send. Exits 3 if it never got there.
 */
public final class CdcChildMain {

  static final String HALTING = "CDC-HALTING-AFTER-SEND ";

  private CdcChildMain() {
  }

  public static void main(String[] args) throws Exception {
    int haltAfter = Integer.parseInt(System.getProperty("cdc.haltAfter"));
    HaltingSink halting = new HaltingSink(
        RocketMQSink.nameServer(System.getProperty("cdc.nameServer")).group("cdc-child").build(),
        haltAfter, HALTING);
    CdcRelay relay = CdcRelay.builder().name(System.getProperty("cdc.name"))
        .jdbcUrl(System.getProperty("cdc.jdbc.url"), System.getProperty("cdc.jdbc.user"),
            System.getProperty("cdc.jdbc.password"))
        .schema(System.getProperty("cdc.schema")).sink(halting).offsetFlushInterval(Duration.ofMillis(200)).build();
    relay.start();
    System.out.println("CDC-STARTED");
    System.out.flush();
    Thread.sleep(90_000);
    System.out.println("CDC-COMPLETED without halting, sent " + halting.sent());
    relay.close();
    System.exit(3);
  }
}
