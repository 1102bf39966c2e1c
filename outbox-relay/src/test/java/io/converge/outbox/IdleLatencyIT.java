package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.RocketMQExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An idle relay picks a new row up well under a second after its commit (adaptive polling, at most
 * 200 ms between idle polls), and while idle it does not hammer the database (a handful of scans of
 * the outbox per second, not hundreds). A relay polling in a tight loop fails the second assertion;
 * one polling every second or more fails the first.
 */
@ExtendWith({RocketMQExtension.class, RelayBed.Extension.class})
class IdleLatencyIT {

  /**
   * The relay's polls of the outbox: the scans of its most scanned partition (the partitioned parent has no scans of
   * its own, and a poll scans every partition it does not prune).
   */
  private static final String SCANS = """
      SELECT coalesce(max(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0) FROM pg_stat_user_tables
      WHERE relid IN (SELECT relid FROM pg_partition_tree('converge_outbox'::regclass))
      """;

  @Test
  void idleRelayDeliversANewRowFastWithoutHammeringTheDatabase(RelayBed bed) throws Exception {
    DataSource ds = bed.ds;
    Deliveries deliveries = bed.deliveries;
    try (OutboxRelay relay = bed.relay(bed.sink().build()).build()) {
      relay.start();
      deliveries.awaitAll(Set.of(bed.publish("warm-up")), Duration.ofSeconds(30));

      long scansBefore = scans(ds);
      idle(deliveries, Duration.ofSeconds(5));
      long idleScans = scans(ds) - scansBefore;

      List<Long> latencies = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        idle(deliveries, Duration.ofMillis(700)); // the relay reaches its longest idle interval
        long start = System.nanoTime();
        String id = bed.publish("k-" + i);
        deliveries.awaitAll(Set.of(id), Duration.ofSeconds(10));
        latencies.add((System.nanoTime() - start) / 1_000_000);
      }
      latencies.sort(null);
      System.out.printf("idle: %d outbox scans in 5 s; commit-to-consumer latency ms sorted %s%n", idleScans,
          latencies);
      assertThat(latencies.get(latencies.size() / 2)).as("median ms").isLessThan(500);
      assertThat(latencies.get(latencies.size() - 1)).as("max ms").isLessThan(1000);
      assertThat(idleScans).as("outbox scans in 5 idle seconds").isLessThan(150);
    }
  }

  /** Nothing to relay for {@code period}: the relay polls idle all along (and sends nothing). */
  private static void idle(Deliveries deliveries, Duration period) {
    int received = deliveries.raw().size();
    await().during(period).atMost(period.plusSeconds(10)).pollInterval(Duration.ofMillis(100))
        .until(() -> deliveries.raw().size() == received);
  }

  /**
   * The outbox scans counted so far, as of the relay's next flush of its counters (a backend flushes
   * them at most once a second): the value once it has changed.
   */
  private static long scans(DataSource ds) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("SELECT pg_stat_force_next_flush()");
      long before = scans(s);
      return await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
          .until(() -> scans(s), n -> n != before);
    }
  }

  private static long scans(Statement s) throws Exception {
    try (ResultSet rs = s.executeQuery(SCANS)) {
      return rs.next() ? rs.getLong(1) : 0;
    }
  }
}
