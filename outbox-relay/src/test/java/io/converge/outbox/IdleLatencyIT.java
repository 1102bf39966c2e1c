package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.TxnProducer;
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
@ExtendWith(RocketMQExtension.class)
class IdleLatencyIT {

  private static final String SCANS = """
      SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables
      WHERE relname = 'converge_outbox' AND schemaname = current_schema()
      """;

  @Test
  void idleRelayDeliversANewRowFastWithoutHammeringTheDatabase(EmbeddedRocketMQ mq) throws Exception {
    DataSource ds = RelayFixture.newOutbox();
    String topic = RocketMQExtension.uniqueTopic("idle");
    mq.createTopic(topic);
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = RelayFixture.producer(ds);
        OutboxRelay relay = RelayFixture.relay(ds, RelayFixture.sink(mq).build()).build()) {
      relay.start();
      deliveries.awaitAll(Set.of(RelayFixture.publish(p, topic, "warm-up")), Duration.ofSeconds(30));

      long scansBefore = scans(ds);
      Thread.sleep(5000);
      long idleScans = scans(ds) - scansBefore;

      List<Long> latencies = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        Thread.sleep(700); // let the relay reach its longest idle interval
        long start = System.nanoTime();
        String id = RelayFixture.publish(p, topic, "k-" + i);
        deliveries.awaitAll(Set.of(id), Duration.ofSeconds(10));
        latencies.add((System.nanoTime() - start) / 1_000_000);
      }
      latencies.sort(null);
      System.out.printf("idle: %d outbox scans in 5 s; commit-to-consumer latency ms sorted %s%n", idleScans, latencies);
      assertThat(latencies.get(latencies.size() / 2)).as("median ms").isLessThan(500);
      assertThat(latencies.get(latencies.size() - 1)).as("max ms").isLessThan(1000);
      assertThat(idleScans).as("outbox scans in 5 idle seconds").isLessThan(150);
    }
  }

  private static long scans(DataSource ds) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("SELECT pg_stat_force_next_flush()");
      Thread.sleep(1100); // other backends flush their counters at most once a second
      try (ResultSet rs = s.executeQuery(SCANS)) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }
}
