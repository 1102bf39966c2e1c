package io.converge.outbox.cdc;

import static org.awaitility.Awaitility.await;

import io.converge.outbox.DiscardingSink;
import io.converge.outbox.spi.OutboxSink;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;

/** A child JVM that starts a CDC relay (a sink that stores nothing) and returns from main without closing it. */
public final class CdcReturningMain {

  static final String RETURNING = "CDC-MAIN-RETURNING";

  private CdcReturningMain() {
  }

  public static void main(String[] args) throws Exception {
    OutboxSink nothing = new DiscardingSink();
    CdcRelay relay = CdcRelay.builder().name(System.getProperty("cdc.name"))
        .jdbcUrl(System.getProperty("cdc.jdbc.url"), System.getProperty("cdc.jdbc.user"),
            System.getProperty("cdc.jdbc.password"))
        .schema(System.getProperty("cdc.schema")).sink(nothing).build();
    relay.start();
    // the engine is up and streaming: its walsender reads the slot
    try (Connection c = DriverManager.getConnection(System.getProperty("cdc.jdbc.url"),
        System.getProperty("cdc.jdbc.user"),
        System.getProperty("cdc.jdbc.password")); Statement s = c.createStatement()) {
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).until(() -> {
        try (ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_replication_slots WHERE active AND slot_name = '"
            + relay.slotName() + "'")) {
          return rs.next() && rs.getLong(1) == 1;
        }
      });
    }
    System.out.println(RETURNING);
    System.out.flush();
  }
}
