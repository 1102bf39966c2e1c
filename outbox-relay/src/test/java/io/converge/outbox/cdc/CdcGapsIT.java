package io.converge.outbox.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.Deliveries;
import io.converge.outbox.micrometer.MicrometerRelayMetrics;
import io.converge.outbox.Outbox;
import io.converge.outbox.RelayBed;
import io.converge.outbox.RelayFixture;
import io.converge.outbox.cdc.CdcSupport.Schema;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The CDC relay's gaps (issue 13.4, 13.5, 13.17): rows committed before its slot existed, a slot dropped
 * and re-created, an engine whose walsender is terminated, a DB-only resume, and a JVM whose main
 * returns without closing the relay.
 */
@ExtendWith({RocketMQExtension.class, RelayBed.Extension.class, ChildJvmExtension.class})
class CdcGapsIT {

  private static Schema newOutbox() throws Exception {
    return CdcSupport.newSchema();
  }

  private static CdcRelay.Builder relay(RelayBed bed, String name) {
    return bed.cdc(name).offsetFlushInterval(Duration.ofMillis(200))
        .sweep(Duration.ofSeconds(2), Duration.ofMillis(500))
        .outageBackoff(Duration.ofMillis(200), Duration.ofSeconds(2));
  }

  private static String string(DataSource ds, String sql) throws Exception {
    return RelayFixture.string(ds, sql);
  }

  private static String name(String prefix) {
    return RelayBed.uniqueName(prefix);
  }

  @Test
  void rowsCommittedBeforeTheFirstStartArePublishedInKeyOrderAndStartCreatesTheSlot(RelayBed bed) throws Exception {
    String name = RelayBed.uniqueName("before");
    CdcSupport.Committed committed = new CdcSupport.Committed();
    try (RocketMQSink sink = bed.sink().group("cdc-" + name).build()) {
      committed.publish(bed, 30, 3); // before the relay ever started: no slot, no stream
      CdcRelay relay = relay(bed, name).sink(sink).build();
      relay.start();
      assertThat(bed.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + relay.slotName() + "'"))
          .as("start() returns with the slot created").isOne();
      committed.publish(bed, 30, 3); // after: the stream, behind the old rows of the same keys
      bed.deliveries.awaitAll(committed.all, Duration.ofSeconds(60));
      bed.deliveries.awaitQuiet(Duration.ofMillis(1500)); // a sweep or two more: nothing sent twice
      committed.assertKeyOrder(bed.deliveries);
      assertThat(bed.count("published_at IS NULL")).isZero();
      relay.dropSlot();
    }
  }

  @Test
  void rowCommittedWhileTheSlotWasDroppedIsPublishedByTheSweeper(RelayBed bed) throws Exception {
    String name = RelayBed.uniqueName("slot");
    try (RocketMQSink sink = bed.sink().group("cdc-" + name).build()) {
      CdcRelay relay = relay(bed, name).sink(sink).build();
      relay.start();
      String first = bed.publish("k");
      bed.deliveries.awaitAll(List.of(first), Duration.ofSeconds(60));
      relay.close();
      // the slot is lost (dropped, or a failover to a replica without it); the stored offset stays
      CdcSupport.awaitSlotInactive(bed.ds, relay.slotName());
      bed.scalar("SELECT count(*) FROM (SELECT pg_drop_replication_slot('" + relay.slotName() + "')) d");
      String whileLost = bed.publish("k");
      relay.start(); // a new slot: its stream starts after whileLost
      String after = bed.publish("k");
      bed.deliveries.awaitAll(List.of(whileLost, after), Duration.ofSeconds(60));
      bed.deliveries.awaitQuiet(Duration.ofMillis(1500));
      assertThat(CdcSupport.byKey(bed.deliveries).get("k")).containsExactly(first, whileLost, after);
      relay.dropSlot();
    }
  }

  @Test
  void killedEngineIsRestartedWithBackoffShownInHealthAndMetricsAndLaterRowsFlow(RelayBed bed) throws Exception {
    String name = RelayBed.uniqueName("restart");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (RocketMQSink sink = bed.sink().group("cdc-" + name).build()) {
      CdcRelay relay = relay(bed, name).sink(sink).metrics(MicrometerRelayMetrics.of(registry))
          .metricsInterval(Duration.ofMillis(200)).build();
      relay.start();
      String before = bed.publish("k");
      bed.deliveries.awaitAll(List.of(before), Duration.ofSeconds(60));
      assertThat(relay.health().running()).isTrue();
      assertThat(relay.health().restarts()).isZero();

      String pid = string(bed.ds,
          "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '" + relay.slotName() + "'");
      assertThat(pid).as("the engine's walsender").isNotNull();
      string(bed.ds, "SELECT pg_terminate_backend(" + pid + ")");
      await("the engine failure seen").atMost(Duration.ofSeconds(60)).until(() -> relay.health().restarts() >= 1);
      assertThat(relay.health().lastFailure()).isNotNull();
      assertThat(registry.get("cdc.restarts").counter().count()).isGreaterThanOrEqualTo(1.0);

      String after = bed.publish("k");
      bed.deliveries.awaitAll(List.of(after), Duration.ofSeconds(60));
      await("the engine running again").atMost(Duration.ofSeconds(30)).until(() -> relay.health().running());
      assertThat(relay.health().lagBytes()).as("cdc.lag readable").isGreaterThanOrEqualTo(0);
      assertThat(registry.get("cdc.lag").gauge().value()).isGreaterThanOrEqualTo(0.0);
      assertThat(CdcSupport.byKey(bed.deliveries).get("k")).containsExactly(before, after);
      relay.dropSlot();
    }
  }

  @Test
  void slotAdvancesWhenOnlyOtherTablesChange(RelayBed bed) throws Exception {
    String name = RelayBed.uniqueName("beat");
    try (RocketMQSink sink = bed.sink().group("cdc-" + name).build()) {
      CdcRelay relay = relay(bed, name).sink(sink).heartbeatInterval(Duration.ofMillis(300)).build();
      relay.start();
      CdcSupport.awaitSlotActive(bed.ds, relay.slotName());
      try (Connection c = bed.ds.getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE other_table (id int, pad text)");
        s.execute("INSERT INTO other_table SELECT g, repeat('x', 500) FROM generate_series(1, 20000) g");
      }
      // the slot confirmed past the other table's writes
      CdcSupport.awaitSlotConfirmedNow(bed.ds, relay.slotName());
      assertThat(relay.health().lagBytes()).isLessThan(1_000_000);
      relay.dropSlot();
    }
  }

  @Test
  void dbOnlyResumeOfAParkedKeyIsSentByTheSweeper(RelayBed bed) throws Exception {
    String missing = RocketMQExtension.uniqueTopic("cdcmissing");
    String name = RelayBed.uniqueName("resume");
    try (RocketMQSink sink = bed.sink().group("cdc-" + name).build()) {
      CdcRelay relay = relay(bed, name).sink(sink).maxAttempts(2)
          .retryBackoff(Duration.ofMillis(50), Duration.ofMillis(200)).build();
      relay.start();
      String orphan = RelayFixture.publish(bed.producer, missing, "orphan");
      String healthy = bed.publish("healthy");
      bed.deliveries.awaitAll(List.of(healthy), Duration.ofSeconds(60));
      await("the row of the missing topic parked").atMost(Duration.ofSeconds(60))
          .until(() -> Outbox.on(bed.ds).parkedCount() == 1);
      assertThat(Outbox.on(bed.ds).parked(1).get(0).messageId()).isEqualTo(orphan);

      bed.mq.createTopic(missing);
      try (Deliveries resumed = new Deliveries(bed.mq, missing)) {
        assertThat(Outbox.on(bed.ds).resume("orphan")).as("what `converge outbox resume orphan` does").isOne();
        resumed.awaitAll(List.of(orphan), Duration.ofSeconds(60));
      }
      await("marked published").atMost(Duration.ofSeconds(10)).until(() -> bed.count("published_at IS NULL") == 0);
      relay.dropSlot();
    }
  }

  @Test
  void jvmWhoseMainReturnsWithoutClosingTheRelayExits(ChildJvms jvms) throws Exception {
    Schema o = newOutbox();
    String name = name("exit");
    ConvergePostgres pg = ConvergePostgres.shared();
    ChildJvm child = jvms.launch(CdcReturningMain.class)
        .property("cdc.jdbc.url", pg.jdbcUrl()).property("cdc.jdbc.user", pg.user())
        .property("cdc.jdbc.password", pg.password())
        .property("cdc.schema", o.name()).property("cdc.name", name).start();
    try {
      boolean exited = child.process().waitFor(90, TimeUnit.SECONDS);
      String output = child.output();
      assertThat(output).as("the child started the relay").contains(CdcReturningMain.RETURNING);
      assertThat(exited).as("the JVM exits by itself after main returned; output:%n%s", output).isTrue();
      assertThat(child.process().exitValue()).isZero();
    } finally {
      child.close();
      string(o.ds(),
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'converge_cdc_" + name
              + "' AND NOT active");
    }
  }
}
