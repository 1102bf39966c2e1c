package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.Envelope;
import io.converge.core.Migrations;
import io.converge.core.internal.BatchPurger;
import io.converge.outbox.cdc.CdcRelay;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.rocketmq.common.message.MessageExt;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * converge_outbox partitioned by day (outbox-relay README, "Partitions by day"): rows go to the partition of the
 * producer's day (else the catch-all) and are relayed in seq order per line whichever partitions they are in; a day
 * partition is dropped whole only when every row in it is published, the newest past the retention; the migration of
 * a populated table keeps its rows relayed; the CDC relay's stream brings the rows of partitions created after its
 * slot under converge_outbox's name.
 */
@ExtendWith({RocketMQExtension.class, RelayBed.Extension.class})
class OutboxPartitionsIT {

  private static final LocalDate SUNDAY = LocalDate.parse("2026-03-01");
  private static final Instant BEFORE_MIDNIGHT = Instant.parse("2026-03-01T23:59:59Z");
  private static final Instant AFTER_MIDNIGHT = Instant.parse("2026-03-02T00:00:01Z");

  private static TxnProducer producerAt(DataSource ds, Instant at) {
    return TxnProducer.builder().group("g-" + UUID.randomUUID().toString().substring(0, 8)).dataSource(ds)
        .backend(OutboxBackend.outbox()).clock(Clock.fixed(at, ZoneOffset.UTC)).build();
  }

  private static String partitionOf(DataSource ds, String id) throws Exception {
    return RelayFixture.string(ds, "SELECT tableoid::regclass::text FROM converge_outbox WHERE message_id = '" + id
        + "'");
  }

  /** Delivered ids of each key, in queue order (a key keeps one queue). */
  private static Map<String, List<String>> byKey(Deliveries deliveries) {
    return deliveries.raw().stream().sorted(Comparator.comparingLong(MessageExt::getQueueOffset))
        .collect(Collectors.groupingBy(m -> m.getUserProperty(Envelope.KEY),
            Collectors.mapping(m -> m.getUserProperty(Envelope.MESSAGE_ID), Collectors.toList())));
  }

  private static String publishTwo(TxnProducer p, String topic, String key) {
    // two messages in one unit: the multi-row statement
    String[] ids = new String[2];
    p.inTransaction(tx -> {
      for (int i = 0; i < 2; i++) {
        ids[i] = tx.publish(OutgoingMessage.builder(topic).key(key).payload(key.getBytes(StandardCharsets.UTF_8))
            .build());
      }
      return null;
    });
    return ids[0] + "," + ids[1];
  }

  @Test
  void rowsGoToTheirDaysPartitionAndKeepTheirLinesOrderAcrossMidnight(RelayBed bed) throws Exception {
    Outbox.partitions(bed.ds).createAhead(SUNDAY, 2);
    Map<String, List<String>> committed = new LinkedHashMap<>();
    List<String> all = new ArrayList<>();
    try (TxnProducer sunday = producerAt(bed.ds, BEFORE_MIDNIGHT);
        TxnProducer monday = producerAt(bed.ds, AFTER_MIDNIGHT);
        TxnProducer thursday = producerAt(bed.ds, AFTER_MIDNIGHT.plus(Duration.ofDays(3)))) {
      // each key's line alternates partitions: Sunday's, Monday's, the catch-all (no partition on Thursday)
      for (int round = 0; round < 3; round++) {
        for (String key : List.of("cart-0", "cart-1")) {
          for (TxnProducer p : List.of(sunday, monday, thursday)) {
            String id = RelayFixture.publish(p, bed.topic, key);
            committed.computeIfAbsent(key, k -> new ArrayList<>()).add(id);
            all.add(id);
          }
          for (String id : publishTwo(monday, bed.topic, key).split(",")) {
            committed.get(key).add(id);
            all.add(id);
          }
        }
      }
      List<String> cart0 = committed.get("cart-0");
      assertThat(partitionOf(bed.ds, cart0.get(0))).isEqualTo("converge_outbox_p20260301");
      assertThat(partitionOf(bed.ds, cart0.get(1))).isEqualTo("converge_outbox_p20260302");
      assertThat(partitionOf(bed.ds, cart0.get(2))).isEqualTo("converge_outbox_catchall");
      assertThat(partitionOf(bed.ds, cart0.get(3))).isEqualTo("converge_outbox_p20260302");
      assertThat(bed.scalar("SELECT count(DISTINCT seq) FROM converge_outbox")).as("one seq for every partition")
          .isEqualTo(all.size());
    }

    try (RocketMQSink sink = bed.sink().build(); OutboxRelay relay = bed.relay(sink).batchSize(2).build()) {
      relay.start();
      bed.deliveries.awaitAll(all, Duration.ofSeconds(30));
    }
    Map<String, List<String>> delivered = byKey(bed.deliveries);
    committed.forEach((key, ids) -> assertThat(delivered.get(key)).as("order of %s", key)
        .containsExactlyElementsOf(ids));
    assertThat(bed.count("published_at IS NULL")).isZero();
  }

  /**
   * Partitions are created in their parent's schema and rows routed to them whatever the writer's search path: a
   * producer whose search path puts another schema first writes to the same partition as one without it.
   */
  @Test
  void partitionsLiveInTheirParentsSchemaSoEverySearchPathRoutesALike() throws Exception {
    DataSource home = RelayFixture.newOutbox();
    String homeName = RelayFixture.string(home, "SELECT current_schema()");
    String other = RelayFixture.string(ConvergePostgres.shared().newSchema("outboxo"), "SELECT current_schema()");
    DataSource otherFirst = ConvergePostgres.shared().dataSource(other + "," + homeName);
    Outbox.on(otherFirst).purge(Duration.ofDays(1), 100, n -> {
    });
    LocalDate today = LocalDate.now(ZoneOffset.UTC);
    assertThat(RelayFixture.scalar(home, "SELECT count(*) FROM pg_class WHERE relname ~ '^converge_outbox_p[0-9]{8}$'"
        + " AND relnamespace = '" + homeName + "'::regnamespace")).isEqualTo(Outbox.PARTITIONS_AHEAD + 1);
    Instant noon = today.atTime(LocalTime.NOON).toInstant(ZoneOffset.UTC);
    try (TxnProducer viaOther = producerAt(otherFirst, noon); TxnProducer direct = producerAt(home, noon)) {
      String a = RelayFixture.publish(viaOther, "topic", "k");
      String b = RelayFixture.publish(direct, "topic", "k");
      String expected = "converge_outbox_p" + today.toString().replace("-", "");
      assertThat(partitionOf(home, a)).isEqualTo(expected);
      assertThat(partitionOf(home, b)).isEqualTo(expected);
    }
  }

  @Test
  void aDayPartitionIsDroppedOnlyWhenEveryRowInItIsPublishedPastTheRetention() throws Exception {
    DataSource ds = RelayFixture.newOutbox();
    LocalDate today = LocalDate.now(ZoneOffset.UTC);
    LocalDate published = today.minusDays(10);
    LocalDate unpublished = today.minusDays(9);
    LocalDate parked = today.minusDays(8);
    LocalDate recent = today.minusDays(7);
    Outbox.partitions(ds).createAhead(published, 4);
    for (LocalDate day : List.of(published, unpublished, parked, recent)) {
      try (TxnProducer p = producerAt(ds, day.atTime(LocalTime.NOON).toInstant(ZoneOffset.UTC))) {
        for (int i = 0; i < 5; i++) {
          RelayFixture.publish(p, "topic", "k-" + day + "-" + i);
        }
      }
    }
    RelayFixture.execute(ds, "UPDATE converge_outbox SET published_at = now() - interval '6 days'");
    String unsent = RelayFixture.string(ds, "SELECT max(message_id) FROM converge_outbox WHERE day = '" + unpublished
        + "'");
    RelayFixture.execute(ds, "UPDATE converge_outbox SET published_at = NULL WHERE message_id = '" + unsent + "'");
    String held = RelayFixture.string(ds, "SELECT max(message_id) FROM converge_outbox WHERE day = '" + parked + "'");
    RelayFixture.execute(ds, "UPDATE converge_outbox SET published_at = NULL, parked_at = now() - interval '8 days',"
        + " attempts = 5 WHERE message_id = '" + held + "'");
    RelayFixture.execute(ds, "UPDATE converge_outbox SET published_at = now() - interval '1 hour'"
        + " WHERE seq = (SELECT max(seq) FROM converge_outbox WHERE day = '" + recent + "')");

    long deleted = Outbox.on(ds).purge(Duration.ofDays(1), 100, n -> {
    });

    assertThat(Outbox.partitions(ds).list()).as("the fully published expired partition only is dropped")
        .doesNotContain(published).contains(unpublished, parked, recent, today, today.plusDays(3));
    assertThat(RelayFixture.count(ds, "message_id IN ('" + unsent + "', '" + held + "')")).isEqualTo(2);
    assertThat(deleted).as("the expired published rows of the partitions kept, row by row").isEqualTo(12);
    assertThat(RelayFixture.count(ds, "day = '" + recent + "'")).as("its row published an hour ago").isEqualTo(1);

    // once resolved (published) and past the retention, they go too
    RelayFixture.execute(ds, "UPDATE converge_outbox SET published_at = now() - interval '2 days', parked_at = NULL"
        + " WHERE published_at IS NULL");
    Outbox.on(ds).purge(Duration.ofDays(1), 100, n -> {
    });
    assertThat(Outbox.partitions(ds).list()).doesNotContain(unpublished, parked).contains(recent);
  }

  /**
   * Rolling upgrade: an earlier version's purge, a batch DELETE keyed by seq on converge_outbox (as it ran before
   * version 5), deletes on the partitioned table only the published rows older than the retention, in every
   * partition: seq is unique across partitions.
   */
  @Test
  void anEarlierVersionsPurgeDeletesOnlyExpiredPublishedRowsOfThePartitionedTable() throws Exception {
    DataSource ds = RelayFixture.newOutbox();
    LocalDate old = LocalDate.now(ZoneOffset.UTC).minusDays(5);
    Outbox.partitions(ds).createAhead(old, 2);
    for (Instant at : List.of(old.atTime(LocalTime.NOON).toInstant(ZoneOffset.UTC),
        old.plusDays(1).atTime(LocalTime.NOON).toInstant(ZoneOffset.UTC), Instant.EPOCH)) {
      try (TxnProducer p = producerAt(ds, at)) {
        for (int i = 0; i < 6; i++) {
          RelayFixture.publish(p, "topic", "k-" + i);
        }
      }
    }
    assertThat(RelayFixture.scalar(ds, "SELECT count(DISTINCT tableoid) FROM converge_outbox")).isEqualTo(3);
    RelayFixture.execute(ds, "UPDATE converge_outbox SET published_at = now() - interval '3 days' WHERE seq % 2 = 0");
    RelayFixture.execute(ds, "UPDATE converge_outbox SET parked_at = now() - interval '3 days' WHERE seq % 3 = 0"
        + " AND published_at IS NULL");

    long deleted = BatchPurger.of(ds, "converge_outbox", "published_at").keyedBy("seq").oldestFirst()
        .purge("the outbox", BatchPurger.Cutoff.olderThan(Duration.ofDays(1)), 4, Long.MAX_VALUE, n -> {
        });

    assertThat(deleted).isEqualTo(9);
    assertThat(RelayFixture.count(ds, "true")).isEqualTo(9);
    assertThat(RelayFixture.count(ds, "published_at IS NULL")).as("unpublished and parked rows, all kept")
        .isEqualTo(9);
  }

  /**
   * The drop checks again under its lock: a row written into an expired partition while the drop waits for the
   * writer's transaction (a producer whose clock is days behind) is seen, and keeps the partition.
   */
  @Test
  void aRowCommittedWhileTheDropWaitsForItsLockKeepsThePartition() throws Exception {
    rowCommittedWhileTheDropWaits(RelayFixture.newOutbox(), false);
  }

  /**
   * The same with a pool whose connections default to REPEATABLE READ: the drop's statements before its lock took the
   * snapshot its check under the lock read, so the row committed meanwhile was not seen and was dropped with its
   * partition (a message lost). The drop runs in READ COMMITTED whatever the pool's default.
   */
  @Test
  void aRowCommittedWhileTheDropWaitsKeepsThePartitionWhenThePoolDefaultsToRepeatableRead() throws Exception {
    rowCommittedWhileTheDropWaits(RelayFixture.newOutbox(), true);
  }

  private static void rowCommittedWhileTheDropWaits(DataSource ds, boolean repeatableRead) throws Exception {
    DataSource dropper = !repeatableRead ? ds
        : (DataSource) java.lang.reflect.Proxy.newProxyInstance(
            DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class}, (proxy, method, args) -> {
              Object result;
              try {
                result = method.invoke(ds, args);
              } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause();
              }
              if (result instanceof Connection c) {
                c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
              }
              return result;
            });
    LocalDate old = LocalDate.now(ZoneOffset.UTC).minusDays(10);
    Outbox.partitions(ds).createAhead(old, 1);
    Instant cutoff = Instant.now().minus(Duration.ofDays(1));
    CompletableFuture<List<LocalDate>> drop;
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute("INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, header_names,"
            + " header_values, payload, day) VALUES ('late', 'g', 't', 'k', '{}', '{}', '\\x00', DATE '" + old + "')");
      }
      drop = CompletableFuture.supplyAsync(() -> Outbox.partitions(dropper).lockTimeout(Duration.ofSeconds(30))
          .dropExpired(LocalDate.now(ZoneOffset.UTC), cutoff));
      Thread.sleep(300);
      assertThat(drop).as("waits for the writer's transaction").isNotDone();
      c.commit();
    }
    assertThat(drop.get(10, TimeUnit.SECONDS)).as("the row committed meanwhile: nothing dropped").isEmpty();
    assertThat(RelayFixture.count(ds, "message_id = 'late'")).isEqualTo(1);
  }

  @Test
  void theMigrationOfAPopulatedTableKeepsItsRowsRelayedInOrder(RelayBed bed) throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("outboxmig");
    Migrations.apply(ds, "producer");
    Flyway.configure(Migrations.class.getClassLoader()).dataSource(ds).locations("classpath:db/converge/outbox")
        .table("converge_schema_history_outbox").baselineOnMigrate(true).baselineVersion("0").target("2").load()
        .migrate();
    List<String> all = new ArrayList<>();
    List<String> cart = new ArrayList<>();
    // written as an earlier version's producer writes them (no day column before version 3)
    for (int i = 0; i < 30; i++) {
      String id = "old-" + i;
      String key = "cart-" + (i % 3);
      RelayFixture.execute(ds, "INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key,"
          + " header_names, header_values, payload) VALUES ('" + id + "', 'old', '" + bed.topic + "', '" + key + "', '"
          + key + "', ARRAY['" + Envelope.MESSAGE_ID + "', '" + Envelope.KEY + "'], ARRAY['" + id + "', '" + key
          + "'], '\\x00')");
      all.add(id);
      if (i % 3 == 0) {
        cart.add(id);
      }
    }
    // an earlier relay published the first ten; a CDC relay's publication names the old table
    RelayFixture.execute(ds, "UPDATE converge_outbox SET published_at = now() WHERE seq <= (SELECT min(seq) + 9 FROM"
        + " converge_outbox)");
    String publication = "converge_cdc_mig_" + UUID.randomUUID().toString().substring(0, 8);
    RelayFixture.execute(ds, "CREATE PUBLICATION " + publication + " FOR TABLE converge_outbox WITH"
        + " (publish = 'insert')");
    long lastSeq = RelayFixture.scalar(ds, "SELECT max(seq) FROM converge_outbox");
    try {
      assertThat(Migrations.apply(ds, "outbox")).isEqualTo(3);
      assertThat(RelayFixture.scalar(ds, "SELECT count(*) FROM converge_outbox_catchall")).isEqualTo(30);
      assertThat(RelayFixture.string(ds, "SELECT string_agg(tablename || ' ' || p.pubviaroot, ',')"
          + " FROM pg_publication_tables t JOIN pg_publication p USING (pubname)"
          + " WHERE pubname = '" + publication + "'"))
          .isEqualTo("converge_outbox true");
      Outbox.on(ds).purge(Duration.ofDays(1), 100, n -> {
      });
      try (TxnProducer after = RelayFixture.producer(ds)) {
        for (int i = 0; i < 6; i++) {
          String id = RelayFixture.publish(after, bed.topic, "cart-" + (i % 3));
          all.add(id);
          if (i % 3 == 0) {
            cart.add(id);
          }
        }
      }
      assertThat(RelayFixture.scalar(ds, "SELECT min(seq) FROM converge_outbox WHERE day <> DATE '1970-01-01'"))
          .as("seq goes on after the old identity's").isGreaterThan(lastSeq);
      assertThat(RelayFixture.count(ds, "day = (now() AT TIME ZONE 'UTC')::date")).isEqualTo(6);

      try (RocketMQSink sink = bed.sink().build(); OutboxRelay relay = RelayFixture.relay(ds, sink).build()) {
        relay.start();
        bed.deliveries.awaitAll(all.subList(10, all.size()), Duration.ofSeconds(30));
        bed.deliveries.awaitQuiet(Duration.ofMillis(300));
      }
      assertThat(byKey(bed.deliveries).get("cart-0"))
          .as("the old unpublished rows first, then the new ones").containsExactlyElementsOf(cart.subList(4,
              cart.size()));
      assertThat(bed.deliveries.ids()).as("the published ones not again")
          .containsExactlyInAnyOrderElementsOf(all.subList(10, all.size()));
    } finally {
      RelayFixture.execute(ds, "DROP PUBLICATION IF EXISTS " + publication);
    }
  }

  /**
   * The CDC relay's publication brings the rows of a partition created after its slot, under converge_outbox's name:
   * the sweeper is kept off (its age longer than the test), so only the stream can deliver them. Without
   * publish_via_partition_root they come under the partition's name, which the relay does not read. The relay's
   * publication was created by an earlier version (on the unpartitioned table, then named the catch-all; the
   * migration could not alter it): the relay brings it up to date when it starts.
   */
  @Test
  void theCdcStreamBringsTheRowsOfAPartitionCreatedAfterItsSlot(RelayBed bed) throws Exception {
    String name = RelayBed.uniqueName("parts");
    List<String> ids = new ArrayList<>();
    try (RocketMQSink sink = bed.sink().group("cdc-" + name).build()) {
      CdcRelay relay = bed.cdc(name).sink(sink).offsetFlushInterval(Duration.ofMillis(200))
          .sweep(Duration.ofMinutes(10), Duration.ofMinutes(10)).build();
      Migrations.apply(bed.ds, "cdc");
      RelayFixture.execute(bed.ds, "CREATE PUBLICATION converge_cdc_" + name + " FOR TABLE converge_outbox_catchall,"
          + " converge_cdc_heartbeat WITH (publish = 'insert')");
      try {
        relay.start();
        ids.add(bed.publish("cart-0")); // no partition yet: the catch-all
        Outbox.partitions(bed.ds).createAhead(LocalDate.now(ZoneOffset.UTC), 1);
        ids.add(bed.publish("cart-0"));
        ids.add(bed.publish("cart-1"));
        assertThat(partitionOf(bed.ds, ids.get(0))).isEqualTo("converge_outbox_catchall");
        assertThat(partitionOf(bed.ds, ids.get(2))).startsWith("converge_outbox_p");
        bed.deliveries.awaitAll(ids, Duration.ofSeconds(30));
        assertThat(byKey(bed.deliveries).get("cart-0")).containsExactly(ids.get(0), ids.get(1));
      } finally {
        relay.dropSlot();
      }
    }
  }
}
