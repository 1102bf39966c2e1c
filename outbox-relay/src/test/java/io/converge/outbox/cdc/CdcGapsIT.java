package io.converge.outbox.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.Deliveries;
import io.converge.outbox.MicrometerRelayMetrics;
import io.converge.outbox.Outbox;
import io.converge.outbox.OutboxBackend;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.producer.Envelope;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.schema.Migrations;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The CDC relay's gaps (issue 13.4, 13.5, 13.17): rows committed before its slot existed, a slot dropped
 * and re-created, an engine whose walsender is terminated, a DB-only resume, and a JVM whose main
 * returns without closing the relay.
 */
@ExtendWith({RocketMQExtension.class, ChildJvmExtension.class})
class CdcGapsIT {

  private record Schema(DataSource ds, String name) {}

  private static Schema newOutbox() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("cdcgap");
    Migrations.apply(ds, "producer");
    Migrations.apply(ds, "outbox");
    return new Schema(ds, string(ds, "SELECT current_schema()"));
  }

  private static CdcRelay.Builder relay(String name, Schema o) {
    ConvergePostgres pg = ConvergePostgres.shared();
    return CdcRelay.builder().name(name).jdbcUrl(pg.jdbcUrl(), pg.user(), pg.password()).schema(o.name())
        .offsetFlushInterval(Duration.ofMillis(200)).sweep(Duration.ofSeconds(2), Duration.ofMillis(500))
        .outageBackoff(Duration.ofMillis(200), Duration.ofSeconds(2));
  }

  private static TxnProducer producer(DataSource ds) {
    return TxnProducer.builder().group("gap-" + UUID.randomUUID().toString().substring(0, 8)).dataSource(ds)
        .backend(OutboxBackend.outbox()).build();
  }

  private static String publish(TxnProducer p, String topic, String key) {
    return p.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).key(key).payload(key.getBytes(UTF_8)).build()));
  }

  private static String string(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  private static long count(DataSource ds, String sql) throws Exception {
    return Long.parseLong(string(ds, sql));
  }

  private static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("%s within %s", what, timeout).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  private static String name(String prefix) {
    return prefix + "_" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Delivered ids of each key, in queue order; and no id twice. */
  private static Map<String, List<String>> byKey(Deliveries deliveries) {
    List<MessageExt> raw = deliveries.raw();
    assertThat(raw.stream().map(m -> m.getUserProperty(Envelope.MESSAGE_ID)).distinct().count())
        .as("no duplicates").isEqualTo(raw.size());
    return raw.stream().sorted(Comparator.comparingLong(MessageExt::getQueueOffset))
        .collect(Collectors.groupingBy(m -> m.getUserProperty(Envelope.KEY),
            Collectors.mapping(m -> m.getUserProperty(Envelope.MESSAGE_ID), Collectors.toList())));
  }

  @Test
  void rowsCommittedBeforeTheFirstStartArePublishedInKeyOrderAndStartCreatesTheSlot(EmbeddedRocketMQ mq) throws Exception {
    Schema o = newOutbox();
    String topic = RocketMQExtension.uniqueTopic("cdcbefore");
    mq.createTopic(topic);
    String name = name("before");
    Map<String, List<String>> committed = new HashMap<>();
    List<String> all = new ArrayList<>();
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = producer(o.ds());
        RocketMQSink sink = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-" + name).build()) {
      for (int i = 0; i < 30; i++) { // before the relay ever started: no slot, no stream
        String key = "cart-" + (i % 3);
        String id = publish(p, topic, key);
        committed.computeIfAbsent(key, k -> new ArrayList<>()).add(id);
        all.add(id);
      }
      CdcRelay relay = relay(name, o).sink(sink).build();
      relay.start();
      assertThat(count(o.ds(), "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + relay.slotName() + "'"))
          .as("start() returns with the slot created").isOne();
      for (int i = 0; i < 30; i++) { // after: the stream, behind the old rows of the same keys
        String key = "cart-" + (i % 3);
        String id = publish(p, topic, key);
        committed.computeIfAbsent(key, k -> new ArrayList<>()).add(id);
        all.add(id);
      }
      deliveries.awaitAll(all, Duration.ofSeconds(60));
      Thread.sleep(1500); // a sweep or two more: nothing sent twice
      Map<String, List<String>> byKey = byKey(deliveries);
      committed.forEach((key, ids) -> assertThat(byKey.get(key)).as("order of %s", key).containsExactlyElementsOf(ids));
      assertThat(count(o.ds(), "SELECT count(*) FROM converge_outbox WHERE published_at IS NULL")).isZero();
      relay.dropSlot();
    }
  }

  @Test
  void rowCommittedWhileTheSlotWasDroppedIsPublishedByTheSweeper(EmbeddedRocketMQ mq) throws Exception {
    Schema o = newOutbox();
    String topic = RocketMQExtension.uniqueTopic("cdcslot");
    mq.createTopic(topic);
    String name = name("slot");
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = producer(o.ds());
        RocketMQSink sink = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-" + name).build()) {
      CdcRelay relay = relay(name, o).sink(sink).build();
      relay.start();
      String first = publish(p, topic, "k");
      deliveries.awaitAll(List.of(first), Duration.ofSeconds(60));
      relay.close();
      // the slot is lost (dropped, or a failover to a replica without it); the stored offset stays
      await("walsender gone", Duration.ofSeconds(30), () -> {
        try {
          return count(o.ds(), "SELECT count(*) FROM pg_replication_slots WHERE active AND slot_name = '" + relay.slotName() + "'") == 0;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      count(o.ds(), "SELECT count(*) FROM (SELECT pg_drop_replication_slot('" + relay.slotName() + "')) d");
      String whileLost = publish(p, topic, "k");
      relay.start(); // a new slot: its stream starts after whileLost
      String after = publish(p, topic, "k");
      deliveries.awaitAll(List.of(whileLost, after), Duration.ofSeconds(60));
      Thread.sleep(1500);
      assertThat(byKey(deliveries).get("k")).containsExactly(first, whileLost, after);
      relay.dropSlot();
    }
  }

  @Test
  void killedEngineIsRestartedWithBackoffShownInHealthAndMetricsAndLaterRowsFlow(EmbeddedRocketMQ mq) throws Exception {
    Schema o = newOutbox();
    String topic = RocketMQExtension.uniqueTopic("cdcrestart");
    mq.createTopic(topic);
    String name = name("restart");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = producer(o.ds());
        RocketMQSink sink = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-" + name).build()) {
      CdcRelay relay = relay(name, o).sink(sink).metrics(MicrometerRelayMetrics.of(registry))
          .metricsInterval(Duration.ofMillis(200)).build();
      relay.start();
      String before = publish(p, topic, "k");
      deliveries.awaitAll(List.of(before), Duration.ofSeconds(60));
      assertThat(relay.health().running()).isTrue();
      assertThat(relay.health().restarts()).isZero();

      String pid = string(o.ds(), "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '" + relay.slotName() + "'");
      assertThat(pid).as("the engine's walsender").isNotNull();
      string(o.ds(), "SELECT pg_terminate_backend(" + pid + ")");
      await("the engine failure seen", Duration.ofSeconds(60), () -> relay.health().restarts() >= 1);
      assertThat(relay.health().lastFailure()).isNotNull();
      assertThat(registry.get("cdc.restarts").counter().count()).isGreaterThanOrEqualTo(1.0);

      String after = publish(p, topic, "k");
      deliveries.awaitAll(List.of(after), Duration.ofSeconds(60));
      await("the engine running again", Duration.ofSeconds(30), () -> relay.health().running());
      assertThat(relay.health().lagBytes()).as("cdc.lag readable").isGreaterThanOrEqualTo(0);
      assertThat(registry.get("cdc.lag").gauge().value()).isGreaterThanOrEqualTo(0.0);
      assertThat(byKey(deliveries).get("k")).containsExactly(before, after);
      relay.dropSlot();
    }
  }

  @Test
  void slotAdvancesWhenOnlyOtherTablesChange(EmbeddedRocketMQ mq) throws Exception {
    Schema o = newOutbox();
    String name = name("beat");
    try (RocketMQSink sink = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-" + name).build()) {
      CdcRelay relay = relay(name, o).sink(sink).heartbeatInterval(Duration.ofMillis(300)).build();
      relay.start();
      await("slot active", Duration.ofSeconds(60), () -> {
        try {
          return count(o.ds(), "SELECT count(*) FROM pg_replication_slots WHERE active AND slot_name = '" + relay.slotName() + "'") == 1;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      try (Connection c = o.ds().getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE other_table (id int, pad text)");
        s.execute("INSERT INTO other_table SELECT g, repeat('x', 500) FROM generate_series(1, 20000) g");
      }
      String written = string(o.ds(), "SELECT pg_current_wal_lsn()::text");
      await("the slot confirmed past the other table's writes", Duration.ofSeconds(60), () -> {
        try {
          return count(o.ds(), "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + relay.slotName()
              + "' AND confirmed_flush_lsn >= '" + written + "'::pg_lsn") == 1;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      assertThat(relay.health().lagBytes()).isLessThan(1_000_000);
      relay.dropSlot();
    }
  }

  @Test
  void dbOnlyResumeOfAParkedKeyIsSentByTheSweeper(EmbeddedRocketMQ mq) throws Exception {
    Schema o = newOutbox();
    String topic = RocketMQExtension.uniqueTopic("cdcresume");
    String missing = RocketMQExtension.uniqueTopic("cdcmissing");
    mq.createTopic(topic);
    String name = name("resume");
    try (Deliveries later = new Deliveries(mq, topic); TxnProducer p = producer(o.ds());
        RocketMQSink sink = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-" + name).build()) {
      CdcRelay relay = relay(name, o).sink(sink).maxAttempts(2).retryBackoff(Duration.ofMillis(50), Duration.ofMillis(200)).build();
      relay.start();
      String orphan = publish(p, missing, "orphan");
      String healthy = publish(p, topic, "healthy");
      later.awaitAll(List.of(healthy), Duration.ofSeconds(60));
      await("the row of the missing topic parked", Duration.ofSeconds(60), () -> Outbox.on(o.ds()).parkedCount() == 1);
      assertThat(Outbox.on(o.ds()).parked(1).get(0).messageId()).isEqualTo(orphan);

      mq.createTopic(missing);
      try (Deliveries resumed = new Deliveries(mq, missing)) {
        assertThat(Outbox.on(o.ds()).resume("orphan")).as("what `converge outbox resume orphan` does").isOne();
        resumed.awaitAll(List.of(orphan), Duration.ofSeconds(60));
      }
      await("marked published", Duration.ofSeconds(10), () -> {
        try {
          return count(o.ds(), "SELECT count(*) FROM converge_outbox WHERE published_at IS NULL") == 0;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      relay.dropSlot();
    }
  }

  @Test
  void jvmWhoseMainReturnsWithoutClosingTheRelayExits(ChildJvms jvms) throws Exception {
    Schema o = newOutbox();
    String name = name("exit");
    ConvergePostgres pg = ConvergePostgres.shared();
    ChildJvm child = jvms.launch(CdcReturningMain.class)
        .property("cdc.jdbc.url", pg.jdbcUrl()).property("cdc.jdbc.user", pg.user()).property("cdc.jdbc.password", pg.password())
        .property("cdc.schema", o.name()).property("cdc.name", name).start();
    try {
      boolean exited = child.process().waitFor(90, TimeUnit.SECONDS);
      String output = child.output();
      assertThat(output).as("the child started the relay").contains(CdcReturningMain.RETURNING);
      assertThat(exited).as("the JVM exits by itself after main returned; output:%n%s", output).isTrue();
      assertThat(child.process().exitValue()).isZero();
    } finally {
      child.close();
      string(o.ds(), "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'converge_cdc_" + name
          + "' AND NOT active");
    }
  }
}
