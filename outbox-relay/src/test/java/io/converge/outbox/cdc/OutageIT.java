package io.converge.outbox.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.Outbox;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.RelayBed;
import io.converge.outbox.RelayFixture;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.core.Envelope;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Issue 19 for the relays: an outage of the database (the relay's own role refused by the server and its
 * connections terminated) or of the broker, longer than maxAttempts x backoff, uses no attempt, parks
 * nothing, and every row committed before, during and after it is delivered once the outage ends.
 * maxAttempts is 1: a single counted attempt would park a key.
 */
@ExtendWith({RocketMQExtension.class, RelayBed.Extension.class})
class OutageIT {

  /** The longest outage backoff of the relays here: the outage lasts four of them. */
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(1);
  private static final Duration OUTAGE = MAX_BACKOFF.multipliedBy(4);

  /** A role of the relay's own, which the test can lock out of the server (superuser: replication, publications). */
  private static String relayRole(DataSource admin) throws Exception {
    String role = "relay_" + UUID.randomUUID().toString().substring(0, 8);
    execute(admin, "CREATE ROLE " + role + " SUPERUSER REPLICATION LOGIN PASSWORD 'relay'");
    return role;
  }

  /** The database is unavailable to {@code role}: logins refused, its connections terminated. */
  private static void lockOut(DataSource admin, String role) throws Exception {
    execute(admin, "ALTER ROLE " + role + " NOLOGIN");
    execute(admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + role + "'");
    // pg_terminate_backend only signals: the outage begins when the last of the role's sessions is gone
    await(role + "'s sessions gone").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
        .until(() -> RelayFixture.scalar(admin,
            "SELECT count(*) FROM pg_stat_activity WHERE usename = '" + role + "'") == 0);
  }

  private static void execute(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static List<String> publish(RelayBed bed, int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(bed.publish("acct-" + (i % 5)));
    }
    return ids;
  }

  private static CdcRelay.Builder cdc(RelayBed bed, String name, String user, String password) {
    return bed.cdc(name).jdbcUrl(ConvergePostgres.shared().jdbcUrl(), user, password)
        .offsetFlushInterval(Duration.ofMillis(200)).maxAttempts(1)
        .retryBackoff(Duration.ofMillis(50), Duration.ofMillis(100))
        .outageBackoff(Duration.ofMillis(100), MAX_BACKOFF)
        .sweep(Duration.ofSeconds(2), Duration.ofMillis(500));
  }

  /**
   * The outage lasts {@link #OUTAGE}; all along, nothing is parked, no attempt is counted and none of
   * {@code held} is delivered (fails at the first sign of either).
   */
  private static void outage(RelayBed bed, List<String> held) {
    await().during(OUTAGE).atMost(OUTAGE.plusSeconds(10)).pollInterval(Duration.ofMillis(250))
        .failFast("an outage parks nothing, counts no attempt and relays nothing held",
            () -> bed.count("attempts > 0 OR parked_at IS NOT NULL") > 0
                || !Collections.disjoint(bed.deliveries.ids(), held))
        .until(() -> true);
  }

  private static void assertNothingCountedAndAllDelivered(RelayBed bed, List<String> all) throws Exception {
    bed.deliveries.awaitAll(all, Duration.ofSeconds(90));
    assertThat(Outbox.on(bed.ds).parkedCount()).as("an outage parks nothing").isZero();
    assertThat(bed.count("attempts > 0")).as("an outage counts no attempt").isZero();
  }

  /**
   * Each key's rows first arrive in commit order ({@code all} is in commit order), and only a row in flight
   * when the relay's connections were cut ({@code inFlight}: sent, its mark lost with the connection) may
   * arrive a second time, never a third.
   */
  private static void assertKeyOrderAndDuplicatesOnlyInFlight(RelayBed bed, List<String> all, List<String> inFlight) {
    bed.deliveries.awaitQuiet(Duration.ofMillis(500));
    List<MessageExt> raw = bed.deliveries.raw().stream().sorted(Comparator.comparingLong(MessageExt::getQueueOffset))
        .toList();
    Map<String, Long> perId = raw.stream()
        .collect(Collectors.groupingBy(m -> m.getUserProperty(Envelope.MESSAGE_ID), Collectors.counting()));
    perId.forEach((id, n) -> {
      assertThat(n).as("deliveries of %s", id).isLessThanOrEqualTo(inFlight.contains(id) ? 2 : 1);
    });
    Map<String, List<String>> firstByKey = raw.stream().collect(Collectors.groupingBy(
        m -> m.getUserProperty(Envelope.KEY), LinkedHashMap::new,
        Collectors.mapping(m -> m.getUserProperty(Envelope.MESSAGE_ID), Collectors.toList())));
    Map<String, String> keyOf = raw.stream().collect(Collectors.toMap(m -> m.getUserProperty(Envelope.MESSAGE_ID),
        m -> m.getUserProperty(Envelope.KEY), (a, b) -> a));
    firstByKey.forEach((key, ids) -> assertThat(ids.stream().distinct().toList()).as("first arrivals of key %s", key)
        .containsExactlyElementsOf(all.stream().filter(id -> key.equals(keyOf.get(id))).toList()));
  }

  @Test
  void pollingRelaySurvivesADatabaseOutage(RelayBed bed) throws Exception {
    String role = relayRole(bed.ds);
    PGSimpleDataSource relayDb = new PGSimpleDataSource();
    relayDb.setUrl(ConvergePostgres.shared().jdbcUrl());
    relayDb.setUser(role);
    relayDb.setPassword("relay");
    relayDb.setCurrentSchema(bed.schema);
    try (OutboxRelay relay = OutboxRelay.builder().dataSource(relayDb).maxAttempts(1).retryBase(Duration.ofMillis(50))
        .brokerBackoff(Duration.ofMillis(100), MAX_BACKOFF)
        .sink(bed.sink().group("dbdown-" + role).build()).build()) {
      relay.start();
      List<String> all = new ArrayList<>(publish(bed, 20));
      bed.deliveries.awaitAll(all, Duration.ofSeconds(60));
      lockOut(bed.ds, role);
      all.addAll(publish(bed, 30));
      outage(bed, all.subList(20, 50));
      assertThat(bed.deliveries.ids()).as("nothing relayed while the database refuses the relay")
          .doesNotContainAnyElementsOf(all.subList(20, 50));
      execute(bed.ds, "ALTER ROLE " + role + " LOGIN");
      all.addAll(publish(bed, 10));
      assertNothingCountedAndAllDelivered(bed, all);
    }
  }

  @Test
  void cdcRelaySurvivesADatabaseOutage(RelayBed bed) throws Exception {
    Migrations.apply(bed.ds, "cdc");
    String role = relayRole(bed.ds);
    String name = RelayBed.uniqueName("dbdown");
    try (RocketMQSink sink = bed.sink().group("cdc-" + name).build()) {
      CdcRelay relay = cdc(bed, name, role, "relay").sink(sink).build();
      relay.start();
      List<String> all = new ArrayList<>(publish(bed, 20));
      bed.deliveries.awaitAll(all, Duration.ofSeconds(60));
      lockOut(bed.ds, role);
      all.addAll(publish(bed, 30));
      outage(bed, List.of());
      execute(bed.ds, "ALTER ROLE " + role + " LOGIN");
      all.addAll(publish(bed, 10));
      assertNothingCountedAndAllDelivered(bed, all);
      // either recovery path is the contract: the engine restarted by the relay (health().restarts() > 0) or
      // Debezium reconnecting inside the engine (seen under load); the guarantee is the same, asserted here
      await("the relay runs after the outage").atMost(Duration.ofSeconds(10)).until(() -> relay.health().running());
      assertKeyOrderAndDuplicatesOnlyInFlight(bed, all, all.subList(0, 20));
      relay.dropSlot();
    }
  }

  @Test
  void cdcRelaySurvivesABrokerOutage(RelayBed bed) throws Exception {
    Migrations.apply(bed.ds, "cdc");
    String name = RelayBed.uniqueName("mqdown");
    ConvergePostgres pg = ConvergePostgres.shared();
    try (RocketMQSink sink = bed.sink().group("cdc-" + name).sendTimeout(Duration.ofSeconds(1)).build()) {
      CdcRelay relay = cdc(bed, name, pg.user(), pg.password()).sink(sink).build();
      relay.start();
      List<String> all = new ArrayList<>(publish(bed, 20));
      bed.deliveries.awaitAll(all, Duration.ofSeconds(60));
      bed.mq.stopBroker();
      try {
        all.addAll(publish(bed, 30));
        outage(bed, List.of());
      } finally {
        bed.mq.startBroker();
      }
      all.addAll(publish(bed, 10));
      assertNothingCountedAndAllDelivered(bed, all);
      relay.dropSlot();
    }
  }
}
