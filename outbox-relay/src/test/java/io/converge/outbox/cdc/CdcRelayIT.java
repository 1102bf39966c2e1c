package io.converge.outbox.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.Deliveries;
import io.converge.outbox.RelayBed;
import io.converge.outbox.RelayFixture;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.core.Envelope;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
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
@ExtendWith({RocketMQExtension.class, RelayBed.Extension.class, ChildJvmExtension.class})
class CdcRelayIT {

  private record Outbox(DataSource ds, String schema) {
  }

  private static Outbox newOutbox() throws Exception {
    CdcSupport.Schema s = CdcSupport.newSchema();
    return new Outbox(s.ds(), s.name());
  }

  private static CdcRelay.Builder relay(String name, Outbox o) {
    ConvergePostgres pg = ConvergePostgres.shared();
    return CdcRelay.builder().name(name).jdbcUrl(pg.jdbcUrl(), pg.user(), pg.password()).schema(o.schema())
        .offsetFlushInterval(Duration.ofMillis(200));
  }

  private static CdcRelay.Builder relay(RelayBed bed, String name) {
    return bed.cdc(name).offsetFlushInterval(Duration.ofMillis(200));
  }

  private static TxnProducer producer(DataSource ds) {
    return RelayFixture.producer(ds);
  }

  private static String publish(TxnProducer p, String topic, String key) {
    return RelayFixture.publish(p, topic, key);
  }

  @Test
  void committedRowsArriveInPerKeyOrderRolledBackNeverAndDropSlotCleansUp(RelayBed bed) throws Exception {
    String name = RelayBed.uniqueName("it");
    CdcSupport.Committed committed = new CdcSupport.Committed();
    try (RocketMQSink sink = bed.sink().group("cdc-" + name).build()) {
      CdcRelay relay = relay(bed, name).sink(sink).build();
      relay.start();
      assertThat(bed.scalar("SELECT count(*) FROM pg_publication WHERE pubname = 'converge_cdc_" + name + "'"
          + " AND pubviaroot AND pubinsert AND NOT pubupdate"))
          .as("rows of every partition under converge_outbox's name")
          .isEqualTo(1);
      for (int i = 0; i < 120; i++) {
        String key = "cart-" + (i % 6);
        String id = bed.publish(key);
        committed.add(key, id);
        if (i % 20 == 0) {
          assertThatThrownBy(() -> bed.producer.inTransaction(tx -> {
            tx.publish(OutgoingMessage.builder(bed.topic).key(key).payload("rolled back".getBytes(UTF_8)).build());
            throw new IllegalStateException("business failure");
          })).isInstanceOf(IllegalStateException.class);
        }
      }
      bed.deliveries.awaitAll(committed.all, Duration.ofSeconds(60));
      bed.deliveries.awaitQuiet(Duration.ofMillis(500));
      List<MessageExt> raw = bed.deliveries.raw();
      assertThat(raw).as("rolled back rows never, committed ones once").hasSize(committed.all.size());
      committed.assertKeyOrder(bed.deliveries);
      // marked published after the send (the purge and the lag metric read it)
      await().atMost(Duration.ofSeconds(10)).until(() -> bed.count("published_at IS NULL") == 0);
      assertThat(bed.count("published_at IS NULL")).isZero();
      assertThat(relay.published()).isEqualTo(committed.all.size());
      relay.dropSlot();
      assertThat(bed.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'converge_cdc_" + name + "'"))
          .isZero();
      assertThat(bed.scalar("SELECT count(*) FROM pg_publication WHERE pubname = 'converge_cdc_" + name + "'"))
          .isZero();
      assertThat(bed.scalar("SELECT count(*) FROM converge_cdc_offset WHERE relay_name = '" + name + "'")).isZero();
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
          .property("cdc.jdbc.url", pg.jdbcUrl()).property("cdc.jdbc.user", pg.user())
          .property("cdc.jdbc.password", pg.password())
          .property("cdc.schema", o.schema()).property("cdc.nameServer", mq.nameServerAddress())
          .property("cdc.name", name)
          .property("cdc.haltAfter", 250).start();
      child.awaitLine("CDC-STARTED", Duration.ofSeconds(60));
      CdcSupport.awaitSlotActive(o.ds(), "converge_cdc_" + name);
      // phase 1: 200 rows, relayed and their offset flushed before anything goes wrong
      for (int i = 0; i < 200; i++) {
        all.add(publish(p, topic, "cart-" + (i % 9)));
      }
      deliveries.awaitAll(all, Duration.ofSeconds(60));
      CdcSupport.awaitSlotConfirmedNow(o.ds(), "converge_cdc_" + name);
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
        deliveries.awaitQuiet(Duration.ofSeconds(1));
        heir.dropSlot();
      }
      Map<String, Long> perId = deliveries.raw().stream()
          .collect(Collectors.groupingBy(m -> m.getUserProperty(Envelope.MESSAGE_ID), Collectors.counting()));
      assertThat(perId.keySet()).containsExactlyInAnyOrderElementsOf(all);
      long replayed = deliveries.raw().size() - all.size();
      System.out.printf("CDC kill -9: %d rows, %d deliveries, %d replayed%n", all.size(), deliveries.raw().size(),
          replayed);
      assertThat(replayed).as("replay bounded by the last flushed offset, not the history").isLessThanOrEqualTo(100);
    }
  }

  private static void awaitParked(DataSource ds, long n) {
    await(n + " rows parked within 60 s").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
        .until(() -> io.converge.outbox.Outbox.on(ds).parkedCount() == n);
  }

  @Test
  void poisonKeyIsParkedAcrossRestartsWhileOthersFlowAndResumeSendsItInOrder(RelayBed bed) throws Exception {
    DataSource ds = bed.ds;
    Deliveries deliveries = bed.deliveries;
    String name = RelayBed.uniqueName("poison");
    try (RocketMQSink strict = bed.sink().group("cdc-strict-" + name).maxMessageBytes(64 * 1024).build();
        RocketMQSink lenient = bed.sink().group("cdc-lenient-" + name).build()) {
      CdcRelay relay = relay(bed, name).sink(strict).maxAttempts(3)
          .retryBackoff(Duration.ofMillis(50), Duration.ofSeconds(1)).build();
      relay.start();
      CdcSupport.awaitSlotActive(ds, relay.slotName());
      String poison = bed.publish("poison", new byte[100 * 1024]);
      String afterPoison = bed.publish("poison");
      List<String> healthy = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        healthy.add(bed.publish("healthy-" + (i % 6)));
      }
      deliveries.awaitAll(healthy, Duration.ofSeconds(60));
      awaitParked(ds, 1); // the head; the key's later rows wait unpublished, as with the polling relay
      assertThat(
          bed.count("message_id = '" + poison + "' AND attempts = 3 AND last_error LIKE '%InvalidMessageException%'"))
          .isOne();

      // a restart forgets nothing: the table says the key is parked, so its new rows wait behind it
      relay.close();
      relay.start();
      CdcSupport.awaitSlotActive(ds, relay.slotName());
      String whileParked = bed.publish("poison");
      String healthyAfter = bed.publish("healthy-0");
      deliveries.awaitAll(List.of(healthyAfter), Duration.ofSeconds(60));
      assertThat(bed.count("order_key = 'poison' AND published_at IS NULL")).isEqualTo(3);
      assertThat(io.converge.outbox.Outbox.on(ds).parkedCount()).isOne();

      // resumed while still too large: parked again with a fresh count, nothing of the key sent
      assertThat(relay.resume("poison")).isZero();
      assertThat(io.converge.outbox.Outbox.on(ds).parkedCount()).isOne();
      assertThat(deliveries.ids()).doesNotContain(poison, afterPoison, whileParked);

      // the limit raised (a relay of the same name with another sink): the key goes out, in order
      relay.close();
      CdcRelay raised = relay(bed, name).sink(lenient).build();
      assertThat(raised.resume("poison")).isEqualTo(3);
      assertThat(raised.resume("poison")).as("nothing left to resume").isZero();
      deliveries.awaitAll(List.of(poison, afterPoison, whileParked), Duration.ofSeconds(60));
      List<String> poisonOrder = deliveries.raw().stream().filter(m -> "poison".equals(m.getUserProperty(Envelope.KEY)))
          .sorted(Comparator.comparingLong(MessageExt::getQueueOffset)).map(m -> m.getUserProperty(Envelope.MESSAGE_ID))
          .toList();
      assertThat(poisonOrder).containsExactly(poison, afterPoison, whileParked);
      assertThat(io.converge.outbox.Outbox.on(ds).parkedCount()).isZero();
      assertThat(bed.count("published_at IS NULL")).isZero();
      raised.dropSlot();
    }
  }
}
