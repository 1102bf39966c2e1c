package io.converge.outbox.cdc;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;

/** A child JVM that starts a CDC relay (a sink that stores nothing) and returns from main without closing it. */
public final class CdcReturningMain {

  static final String RETURNING = "CDC-MAIN-RETURNING";

  private CdcReturningMain() {}

  public static void main(String[] args) throws Exception {
    OutboxSink nothing = new OutboxSink() {
      @Override
      public String name() {
        return "nothing";
      }

      @Override
      public void send(OutboxRecord record) {}

      @Override
      public void close() {}
    };
    CdcRelay relay = CdcRelay.builder().name(System.getProperty("cdc.name"))
        .jdbcUrl(System.getProperty("cdc.jdbc.url"), System.getProperty("cdc.jdbc.user"), System.getProperty("cdc.jdbc.password"))
        .schema(System.getProperty("cdc.schema")).sink(nothing).build();
    relay.start();
    Thread.sleep(3000); // the engine is up and streaming
    System.out.println(RETURNING);
    System.out.flush();
  }
}
