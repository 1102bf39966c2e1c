package io.converge.consumer;

import static io.converge.consumer.Db.count;
import static io.converge.consumer.Db.exec;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * converge_dedup partitioned by the day of the message id (consumer-idem README, "Partitions by day"): a message is
 * claimed once within the retention whichever partition its copies are routed to, whatever day they come on; expired
 * day partitions are dropped whole; the migration from the unpartitioned table keeps its claims. Each test has a schema
 * of its own (partitions are per schema) and an injected clock.
 */
class DedupPartitionsIT {

  private static final Instant MONDAY = Instant.parse("2026-03-02T10:00:00Z");
  private static final LocalDate MONDAY_DAY = LocalDate.parse("2026-03-02");

  private static DataSource schema() {
    DataSource ds = ConvergePostgres.shared().newSchema("parts");
    Db.consumerTablesAndLedger(ds);
    return ds;
  }

  private static IdempotentHandler consumer(DataSource ds, Instant now, AtomicInteger runs) {
    return IdempotentHandler.builder().group("billing").dataSource(ds).policy(Db.FAST)
        .clock(Clock.fixed(now, ZoneOffset.UTC)).handler((c, m) -> runs.incrementAndGet()).build();
  }

  private static IncomingMessage message(String id) {
    return IncomingMessage.builder().topic("payments").header(Envelope.MESSAGE_ID, id).payload("{}").build();
  }

  private static String idAt(Instant at) {
    return new MessageIds(Clock.fixed(at, ZoneOffset.UTC)).next();
  }

  private static DedupPurger purger(DataSource ds, Instant now) {
    return new DedupPurger(ds, DedupPurger.DEFAULT_RETENTION, 100, Clock.fixed(now, ZoneOffset.UTC));
  }

  private static String partitionOf(DataSource ds, String id) {
    return Db.string(ds, "SELECT tableoid::regclass::text FROM converge_dedup WHERE message_id = '" + id + "'");
  }

  @Test
  void aRedeliveryOnALaterDayStillConflicts() {
    DataSource ds = schema();
    purger(ds, MONDAY).purgeExpired(1);
    assertThat(DedupPurger.partitions(ds).list()).containsExactly(MONDAY_DAY, MONDAY_DAY.plusDays(1),
        MONDAY_DAY.plusDays(2), MONDAY_DAY.plusDays(3));
    AtomicInteger runs = new AtomicInteger();
    String id = idAt(MONDAY.minusSeconds(60));
    assertThat(consumer(ds, MONDAY, runs).handle(message(id))).isEqualTo(Outcome.PROCESSED);
    assertThat(partitionOf(ds, id)).isEqualTo("converge_dedup_p20260302");

    Instant wednesday = MONDAY.plus(Duration.ofDays(2));
    purger(ds, wednesday).purgeExpired(1);
    assertThat(consumer(ds, wednesday, runs).handle(message(id))).as("redelivered two days later")
        .isEqualTo(Outcome.DUPLICATE);
    assertThat(runs).hasValue(1);
  }

  /**
   * Partitions are created in their parent's schema and claims find them there, whatever an instance's search path:
   * when a purger whose search path put another schema first created them there, an instance without that schema
   * routed the id to the catch-all (which does not look into the day partitions) and claimed it a second time.
   */
  @Test
  void partitionsLiveInTheirParentsSchemaSoEverySearchPathRoutesAnIdAlike() {
    DataSource ds = schema();
    String home = Db.string(ds, "SELECT current_schema()");
    String other = Db.string(ConvergePostgres.shared().newSchema("partso"), "SELECT current_schema()");
    DataSource otherFirst = ConvergePostgres.shared().dataSource(other + "," + home);
    purger(otherFirst, MONDAY).purgeExpired(1);
    AtomicInteger runs = new AtomicInteger();
    String id = idAt(MONDAY.minusSeconds(60));
    assertThat(consumer(otherFirst, MONDAY, runs).handle(message(id))).isEqualTo(Outcome.PROCESSED);
    assertThat(consumer(ds, MONDAY, runs).handle(message(id))).as("the same id on the schema's own search path")
        .isEqualTo(Outcome.DUPLICATE);
    assertThat(runs).hasValue(1);
    assertThat(count(ds, "SELECT count(*) FROM pg_class WHERE relkind = 'r' AND relname ~ '^converge_dedup_p[0-9]{8}$'"
        + " AND relnamespace = '" + home + "'::regnamespace")).isEqualTo(4);

    assertThat(partitionOf(ds, id)).isEqualTo("converge_dedup_p20260302");
  }

  @Test
  void foreignAndFutureDatedIdsAreClaimedOnceWhenTheirDaysPartitionAppearsLater() {
    DataSource ds = schema();
    purger(ds, MONDAY).purgeExpired(1);
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler monday = consumer(ds, MONDAY, runs);
    String foreign = "order-42";
    String v4 = UUID.randomUUID().toString();
    String future = idAt(MONDAY.plus(Duration.ofDays(5))); // a producer's clock days ahead: no partition yet
    for (String id : List.of(foreign, v4, future)) {
      assertThat(monday.handle(message(id))).as(id).isEqualTo(Outcome.PROCESSED);
      assertThat(partitionOf(ds, id)).as(id).isEqualTo("converge_dedup_catchall");
      assertThat(monday.handle(message(id))).as(id).isEqualTo(Outcome.DUPLICATE);
    }

    Instant later = MONDAY.plus(Duration.ofDays(4)); // within the retention, the future id's day has a partition
    purger(ds, later).purgeExpired(1);
    assertThat(DedupPurger.partitions(ds).list()).contains(MessageIds.dayOf(future));
    assertThat(consumer(ds, later, runs).handle(message(future))).isEqualTo(Outcome.DUPLICATE);
    assertThat(runs).hasValue(3);
  }

  @Test
  void concurrentCopiesOnTwoConnectionsRunOnce() throws Exception {
    DataSource ds = schema();
    purger(ds, MONDAY).purgeExpired(1);
    String id = idAt(MONDAY);
    AtomicInteger runs = new AtomicInteger();
    CompletableFuture<Outcome> second;
    // the first copy's claim is uncommitted while the second copy claims on another connection
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute("INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, topic, processed_at, day)"
            + " VALUES ('default', 'billing', '" + id + "', 'PROCESSED', 'payments', now(), DATE '"
            + MessageIds.dayOf(id) + "')");
      }
      second = CompletableFuture.supplyAsync(() -> consumer(ds, MONDAY, runs).handle(message(id)));
      Thread.sleep(300);
      assertThat(second).as("waits for the first claim").isNotDone();
      c.commit();
    }
    assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(Outcome.DUPLICATE);
    assertThat(runs).hasValue(0);
  }

  @Test
  void expiredDayPartitionsAreDroppedWholeButNeverUnderAClaimInFlight() throws Exception {
    DataSource ds = schema();
    Instant sunday = MONDAY.minus(Duration.ofDays(1));
    purger(ds, sunday).purgeExpired(1);
    AtomicInteger runs = new AtomicInteger();
    String old = idAt(MONDAY);
    consumer(ds, MONDAY, runs).handle(message(old));
    String lateSunday = idAt(sunday); // first delivered on Saturday (a consumer down for days)
    consumer(ds, MONDAY.plus(Duration.ofDays(5)), runs).handle(message(lateSunday));
    assertThat(partitionOf(ds, lateSunday)).isEqualTo("converge_dedup_p20260301");

    // next week, Monday's partition is past the retention, but a late first delivery of a Monday message is being
    // handled in it (claimed, the handler still running)
    Instant nextWeek = MONDAY.plus(Duration.ofDays(8));
    String lateMonday = idAt(MONDAY.plusSeconds(1));
    CountDownLatch claimed = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    IdempotentHandler slow = IdempotentHandler.builder().group("billing").dataSource(ds).policy(Db.FAST)
        .clock(Clock.fixed(nextWeek, ZoneOffset.UTC)).handler((c, m) -> {
          claimed.countDown();
          finish.await();
        }).build();
    CompletableFuture<Outcome> inFlight = CompletableFuture.supplyAsync(() -> slow.handle(message(lateMonday)));
    assertThat(claimed.await(10, TimeUnit.SECONDS)).isTrue();

    long started = System.nanoTime();
    purger(ds, nextWeek).purgeExpired(1);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).as("the purge gave up its locks instead of queuing")
        .isLessThan(Duration.ofSeconds(5));
    assertThat(DedupPurger.partitions(ds).list()).contains(MONDAY_DAY);

    Instant cutoff = nextWeek.minus(DedupPurger.DEFAULT_RETENTION);
    CompletableFuture<List<LocalDate>> patientDrop = CompletableFuture.supplyAsync(() -> DedupPurger.partitions(ds)
        .lockTimeout(Duration.ofSeconds(30)).dropExpired(LocalDate.ofInstant(cutoff, ZoneOffset.UTC), cutoff));
    Thread.sleep(300);
    assertThat(patientDrop).as("waits for the claim's transaction").isNotDone();
    finish.countDown();
    assertThat(inFlight.get(10, TimeUnit.SECONDS)).isEqualTo(Outcome.PROCESSED);
    assertThat(patientDrop.get(10, TimeUnit.SECONDS)).as("the claim committed meanwhile: nothing dropped").isEmpty();
    assertThat(consumer(ds, nextWeek, runs).handle(message(lateMonday))).isEqualTo(Outcome.DUPLICATE);

    Instant later = nextWeek.plus(Duration.ofDays(8));
    purger(ds, later).purgeExpired(1);
    assertThat(DedupPurger.partitions(ds).list()).as("dropped whole; created ahead")
        .doesNotContain(MONDAY_DAY.minusDays(1), MONDAY_DAY).contains(LocalDate.parse("2026-03-21"));
    assertThat(consumer(ds, later, runs).handle(message(old))).as("past the retention: routed to the catch-all")
        .isEqualTo(Outcome.PROCESSED);
    assertThat(partitionOf(ds, old)).isEqualTo("converge_dedup_catchall");
  }

  @Test
  void theMigrationKeepsTheClaimsOfThePopulatedUnpartitionedTable() {
    DataSource ds = ConvergePostgres.shared().newSchema("parts");
    Flyway.configure(Migrations.class.getClassLoader()).dataSource(ds).locations("classpath:db/converge/consumer")
        .table("converge_schema_history_consumer").baselineOnMigrate(true).baselineVersion("0").target("4").load()
        .migrate();
    exec(ds, "INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, topic, processed_at)"
        + " SELECT 'default', 'billing', 'old-' || g, 'PROCESSED', 'payments', now() FROM generate_series(1, 1000) g");
    String v7 = idAt(MONDAY);
    exec(ds, "INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, topic, processed_at)"
        + " VALUES ('default', 'billing', '" + v7 + "', 'PROCESSED', 'payments', now())");

    assertThat(Migrations.apply(ds, "consumer")).isEqualTo(3);
    exec(ds, "CREATE TABLE ledger (id BIGSERIAL PRIMARY KEY, message_id TEXT, body TEXT)");
    assertThat(count(ds, "SELECT count(*) FROM converge_dedup_catchall")).isEqualTo(1001);
    purger(ds, MONDAY).purgeExpired(1); // Monday's partition now exists: v7 routes there and finds its old claim
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler handler = consumer(ds, MONDAY, runs);
    assertThat(handler.handle(message("old-7"))).isEqualTo(Outcome.DUPLICATE);
    assertThat(handler.handle(message(v7))).isEqualTo(Outcome.DUPLICATE);
    assertThat(handler.handle(message("new-1"))).isEqualTo(Outcome.PROCESSED);
    assertThat(runs).hasValue(1);
    assertThat(count(ds, "SELECT count(*) FROM pg_class WHERE relname = 'converge_dedup_catchall'"
        + " AND relispartition AND relnamespace = current_schema()::regnamespace")).isEqualTo(1);
  }
}
