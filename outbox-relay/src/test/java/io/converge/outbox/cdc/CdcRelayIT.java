package io.converge.outbox.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.Deliveries;
import io.converge.outbox.OutboxBackend;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.producer.Envelope;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.schema.Migrations;
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
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The CDC relay on the embedded PostgreSQL's WAL into the embedded RocketMQ: committed rows in per-key
 * order, rolled-back rows never, and after a kill -9 everything delivered with a replay bounded by
 * the offset flush (not the whole history).
 */
@ExtendWith({RocketMQExtension.class, ChildJvmExtension.class})
class CdcRelayIT {

  private record Outbox(DataSource ds, String schema) {}

  private static Outbox newOutbox() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("cdc");
    Migrations.apply(ds, "producer");
    Migrations.apply(ds, "outbox");
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT current_schema()")) {
      rs.next();
      return new Outbox(ds, rs.getString(1));
    }
  }

  private static CdcRelay.Builder relay(String name, Outbox o) {
    ConvergePostgres pg = ConvergePostgres.shared();
    return CdcRelay.builder().name(name).jdbcUrl(pg.jdbcUrl(), pg.user(), pg.password()).schema(o.schema())
        .offsetFlushInterval(Duration.ofMillis(200));
  }

  private static TxnProducer producer(DataSource ds) {
    return TxnProducer.builder().group("cdc-" + UUID.randomUUID().toString().substring(0, 8)).dataSource(ds)
        .backend(OutboxBackend.outbox()).build();
  }

  private static String publish(TxnProducer p, String topic, String key) {
    return p.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).key(key).payload(key.getBytes(UTF_8)).build()));
  }

  private static long count(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void committedRowsArriveInPerKeyOrderRolledBackNeverAndDropSlotCleansUp(EmbeddedRocketMQ mq) throws Exception {
    Outbox o = newOutbox();
    String topic = RocketMQExtension.uniqueTopic("cdc");
    mq.createTopic(topic);
    String name = "it_" + UUID.randomUUID().toString().substring(0, 8);
    Map<String, List<String>> committed = new HashMap<>();
    List<String> all = new ArrayList<>();
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = producer(o.ds());
         RocketMQSink sink = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-" + name).build()) {
      CdcRelay relay = relay(name, o).sink(sink).build();
      relay.start();
      for (int i = 0; i < 120; i++) {
        String key = "cart-" + (i % 6);
        String id = publish(p, topic, key);
        committed.computeIfAbsent(key, k -> new ArrayList<>()).add(id);
        all.add(id);
        if (i % 20 == 0) {
          assertThatThrownBy(() -> p.inTransaction(tx -> {
            tx.publish(OutgoingMessage.builder(topic).key(key).payload("rolled back".getBytes(UTF_8)).build());
            throw new IllegalStateException("business failure");
          })).isInstanceOf(IllegalStateException.class);
        }
      }
      deliveries.awaitAll(all, Duration.ofSeconds(60));
      Thread.sleep(500);
      List<MessageExt> raw = deliveries.raw();
      assertThat(raw).as("rolled back rows never, committed ones once").hasSize(all.size());
      Map<String, List<String>> byKey = raw.stream().sorted(Comparator.comparingLong(MessageExt::getQueueOffset))
          .collect(Collectors.groupingBy(m -> m.getUserProperty(Envelope.KEY),
              Collectors.mapping(m -> m.getUserProperty(Envelope.MESSAGE_ID), Collectors.toList())));
      committed.forEach((key, ids) -> assertThat(byKey.get(key)).as("order of %s", key).containsExactlyElementsOf(ids));
      // marked published after the send (the purge and the lag metric read it)
      java.util.concurrent.TimeUnit.MILLISECONDS.sleep(500);
      assertThat(count(o.ds(), "SELECT count(*) FROM converge_outbox WHERE published_at IS NULL")).isZero();
      assertThat(relay.published()).isEqualTo(all.size());
      relay.dropSlot();
      assertThat(count(o.ds(), "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'converge_cdc_" + name + "'")).isZero();
      assertThat(count(o.ds(), "SELECT count(*) FROM pg_publication WHERE pubname = 'converge_cdc_" + name + "'")).isZero();
      assertThat(count(o.ds(), "SELECT count(*) FROM converge_cdc_offset WHERE relay_name = '" + name + "'")).isZero();
    }
  }

  @Test
  void killedRelayResumesFromItsStoredOffsetAndLosesNothing(EmbeddedRocketMQ mq, ChildJvms jvms) throws Exception {
    Outbox o = newOutbox();
    String topic = RocketMQExtension.uniqueTopic("cdckill");
    mq.createTopic(topic);
    String name = "kill_" + UUID.randomUUID().toString().substring(0, 8);
    ConvergePostgres pg = ConvergePostgres.shared();
    List<String> all = new ArrayList<>();
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = producer(o.ds())) {
      ChildJvm child = jvms.launch(CdcChildMain.class).heap("384m")
          .property("cdc.jdbc.url", pg.jdbcUrl()).property("cdc.jdbc.user", pg.user()).property("cdc.jdbc.password", pg.password())
          .property("cdc.schema", o.schema()).property("cdc.nameServer", mq.nameServerAddress()).property("cdc.name", name)
          .property("cdc.haltAfter", 250).start();
      child.awaitLine("CDC-STARTED", Duration.ofSeconds(60));
      Thread.sleep(3000);
      // phase 1: 200 rows, relayed and their offset flushed before anything goes wrong
      for (int i = 0; i < 200; i++) {
        all.add(publish(p, topic, "cart-" + (i % 9)));
      }
      deliveries.awaitAll(all, Duration.ofSeconds(60));
      Thread.sleep(1500);
      // phase 2: 100 more; the relay dies after its 250th send, 50 rows into them
      for (int i = 0; i < 100; i++) {
        all.add(publish(p, topic, "cart-" + (i % 9)));
      }
      int exit = child.awaitExit(Duration.ofSeconds(90)); // fails with the output when the child did not exit
      String output = child.output();
      assertThat(exit).as("CDC child halted; output:%n%s", output).isEqualTo(ChildJvm.HALTED);

      try (RocketMQSink sink = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-heir-" + name).build()) {
        CdcRelay heir = relay(name, o).sink(sink).build();
        heir.start();
        deliveries.awaitAll(all, Duration.ofSeconds(60));
        Thread.sleep(1000);
        heir.dropSlot();
      }
      Map<String, Long> perId = deliveries.raw().stream()
          .collect(Collectors.groupingBy(m -> m.getUserProperty(Envelope.MESSAGE_ID), Collectors.counting()));
      assertThat(perId.keySet()).containsExactlyInAnyOrderElementsOf(all);
      long replayed = deliveries.raw().size() - all.size();
      System.out.printf("CDC kill -9: %d rows, %d deliveries, %d replayed%n", all.size(), deliveries.raw().size(), replayed);
      assertThat(replayed).as("replay bounded by the last flushed offset, not the history").isLessThanOrEqualTo(100);
    }
  }

  private static void awaitSlot(DataSource ds, CdcRelay relay) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (count(ds, "SELECT count(*) FROM pg_replication_slots WHERE active AND slot_name = '" + relay.slotName() + "'") == 0) {
      assertThat(System.nanoTime()).as("slot %s active within 60 s", relay.slotName()).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  private static void awaitParked(DataSource ds, long n) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (io.converge.outbox.Outbox.on(ds).parkedCount() != n) {
      assertThat(System.nanoTime()).as("%d rows parked within 60 s", n).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  @Test
  void poisonKeyIsParkedAcrossRestartsWhileOthersFlowAndResumeSendsItInOrder(EmbeddedRocketMQ mq) throws Exception {
    Outbox o = newOutbox();
    String topic = RocketMQExtension.uniqueTopic("cdcpoison");
    mq.createTopic(topic);
    String name = "poison_" + UUID.randomUUID().toString().substring(0, 8);
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = producer(o.ds());
         RocketMQSink strict = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-strict-" + name)
             .maxMessageBytes(64 * 1024).build();
         RocketMQSink lenient = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-lenient-" + name).build()) {
      CdcRelay relay = relay(name, o).sink(strict).maxAttempts(3).retryBackoff(Duration.ofMillis(50), Duration.ofSeconds(1)).build();
      relay.start();
      awaitSlot(o.ds(), relay);
      String poison = p.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).key("poison").payload(new byte[100 * 1024]).build()));
      String afterPoison = publish(p, topic, "poison");
      List<String> healthy = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        healthy.add(publish(p, topic, "healthy-" + (i % 6)));
      }
      deliveries.awaitAll(healthy, Duration.ofSeconds(60));
      awaitParked(o.ds(), 1); // the head; the key's later rows wait unpublished, as with the polling relay
      assertThat(count(o.ds(), "SELECT count(*) FROM converge_outbox WHERE message_id = '" + poison
          + "' AND attempts = 3 AND last_error LIKE '%InvalidMessageException%'")).isOne();

      // a restart forgets nothing: the table says the key is parked, so its new rows wait behind it
      relay.close();
      relay.start();
      awaitSlot(o.ds(), relay);
      String whileParked = publish(p, topic, "poison");
      String healthyAfter = publish(p, topic, "healthy-0");
      deliveries.awaitAll(List.of(healthyAfter), Duration.ofSeconds(60));
      assertThat(count(o.ds(), "SELECT count(*) FROM converge_outbox WHERE order_key = 'poison' AND published_at IS NULL")).isEqualTo(3);
      assertThat(io.converge.outbox.Outbox.on(o.ds()).parkedCount()).isOne();

      // resumed while still too large: parked again with a fresh count, nothing of the key sent
      assertThat(relay.resume("poison")).isZero();
      assertThat(io.converge.outbox.Outbox.on(o.ds()).parkedCount()).isOne();
      assertThat(deliveries.ids()).doesNotContain(poison, afterPoison, whileParked);

      // the limit raised (a relay of the same name with another sink): the key goes out, in order
      relay.close();
      CdcRelay raised = relay(name, o).sink(lenient).build();
      assertThat(raised.resume("poison")).isEqualTo(3);
      assertThat(raised.resume("poison")).as("nothing left to resume").isZero();
      deliveries.awaitAll(List.of(poison, afterPoison, whileParked), Duration.ofSeconds(60));
      List<String> poisonOrder = deliveries.raw().stream().filter(m -> "poison".equals(m.getUserProperty(Envelope.KEY)))
          .sorted(Comparator.comparingLong(MessageExt::getQueueOffset)).map(m -> m.getUserProperty(Envelope.MESSAGE_ID)).toList();
      assertThat(poisonOrder).containsExactly(poison, afterPoison, whileParked);
      assertThat(io.converge.outbox.Outbox.on(o.ds()).parkedCount()).isZero();
      assertThat(count(o.ds(), "SELECT count(*) FROM converge_outbox WHERE published_at IS NULL")).isZero();
      raised.dropSlot();
    }
  }
}
