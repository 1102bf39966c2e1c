package io.converge.outbox.cdc;

import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A CDC relay process for the crash test: relays into RocketMQ and halts the JVM
 * ({@code Runtime.halt}, like kill -9) right after its N-th send. Exits 3 if it never got there.
 */
public final class CdcChildMain {

  static final String HALTING = "CDC-HALTING-AFTER-SEND ";

  private CdcChildMain() {}

  public static void main(String[] args) throws Exception {
    int haltAfter = Integer.parseInt(System.getProperty("cdc.haltAfter"));
    RocketMQSink rocketmq = RocketMQSink.nameServer(System.getProperty("cdc.nameServer")).group("cdc-child").build();
    AtomicInteger sent = new AtomicInteger();
    OutboxSink halting = new OutboxSink() {
      @Override
      public String name() {
        return "halting-rocketmq";
      }

      @Override
      public void send(OutboxRecord record) throws Exception {
        rocketmq.send(record);
        if (sent.incrementAndGet() == haltAfter) {
          System.out.println(HALTING + sent.get());
          System.out.flush();
          Runtime.getRuntime().halt(137);
        }
      }

      @Override
      public void close() {
        rocketmq.close();
      }
    };
    CdcRelay relay = CdcRelay.builder().name(System.getProperty("cdc.name"))
        .jdbcUrl(System.getProperty("cdc.jdbc.url"), System.getProperty("cdc.jdbc.user"), System.getProperty("cdc.jdbc.password"))
        .schema(System.getProperty("cdc.schema")).sink(halting).offsetFlushInterval(Duration.ofMillis(200)).build();
    relay.start();
    System.out.println("CDC-STARTED");
    System.out.flush();
    Thread.sleep(90_000);
    System.out.println("CDC-COMPLETED without halting, sent " + sent.get());
    relay.close();
    System.exit(3);
  }
}
