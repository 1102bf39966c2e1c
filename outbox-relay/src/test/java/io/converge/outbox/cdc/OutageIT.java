package io.converge.outbox.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.Deliveries;
import io.converge.outbox.Outbox;
import io.converge.outbox.OutboxBackend;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.schema.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Issue 19 for the relays: an outage of the database (the relay's own role refused by the server and its
 * connections terminated) or of the broker, longer than maxAttempts x backoff, uses no attempt, parks
 * nothing, and every row committed before, during and after it is delivered once the outage ends.
 * maxAttempts is 1: a single counted attempt would park a key.
 */
@ExtendWith(RocketMQExtension.class)
class OutageIT {

  private static final Duration OUTAGE = Duration.ofSeconds(8);

  private record Schema(DataSource ds, String name) {}

  private static Schema newOutbox() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("outage");
    Migrations.apply(ds, "producer");
    Migrations.apply(ds, "outbox");
    Migrations.apply(ds, "cdc");
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT current_schema()")) {
      rs.next();
      return new Schema(ds, rs.getString(1));
    }
  }

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
  }

  private static void execute(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static long count(DataSource ds, String where) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM converge_outbox WHERE " + where)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static TxnProducer producer(DataSource ds) {
    return TxnProducer.builder().group("outage-" + UUID.randomUUID().toString().substring(0, 8)).dataSource(ds)
        .backend(OutboxBackend.outbox()).build();
  }

  private static List<String> publish(TxnProducer p, String topic, int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String key = "acct-" + (i % 5);
      ids.add(p.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).key(key).payload(key.getBytes(UTF_8)).build())));
    }
    return ids;
  }

  private static CdcRelay.Builder cdc(String name, Schema o, String user, String password) {
    return CdcRelay.builder().name(name).jdbcUrl(ConvergePostgres.shared().jdbcUrl(), user, password).schema(o.name())
        .offsetFlushInterval(Duration.ofMillis(200)).maxAttempts(1).retryBackoff(Duration.ofMillis(50), Duration.ofMillis(100))
        .outageBackoff(Duration.ofMillis(100), Duration.ofSeconds(2)).sweep(Duration.ofSeconds(2), Duration.ofMillis(500));
  }

  private static void assertNothingCountedAndAllDelivered(Schema o, Deliveries deliveries, List<String> all) throws Exception {
    deliveries.awaitAll(all, Duration.ofSeconds(90));
    assertThat(Outbox.on(o.ds()).parkedCount()).as("an outage parks nothing").isZero();
    assertThat(count(o.ds(), "attempts > 0")).as("an outage counts no attempt").isZero();
  }

  @Test
  void pollingRelaySurvivesADatabaseOutage(EmbeddedRocketMQ mq) throws Exception {
    Schema o = newOutbox();
    String topic = RocketMQExtension.uniqueTopic("dbdown");
    mq.createTopic(topic);
    String role = relayRole(o.ds());
    PGSimpleDataSource relayDb = new PGSimpleDataSource();
    relayDb.setUrl(ConvergePostgres.shared().jdbcUrl());
    relayDb.setUser(role);
    relayDb.setPassword("relay");
    relayDb.setCurrentSchema(o.name());
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = producer(o.ds());
        OutboxRelay relay = OutboxRelay.builder().dataSource(relayDb).maxAttempts(1).retryBase(Duration.ofMillis(50))
            .brokerBackoff(Duration.ofMillis(100), Duration.ofSeconds(2))
            .sink(RocketMQSink.nameServer(mq.nameServerAddress()).group("dbdown-" + role).build()).build()) {
      relay.start();
      List<String> all = new ArrayList<>(publish(p, topic, 20));
      deliveries.awaitAll(all, Duration.ofSeconds(60));
      lockOut(o.ds(), role);
      all.addAll(publish(p, topic, 30));
      Thread.sleep(OUTAGE.toMillis());
      assertThat(deliveries.ids()).as("nothing relayed while the database refuses the relay").doesNotContainAnyElementsOf(all.subList(20, 50));
      execute(o.ds(), "ALTER ROLE " + role + " LOGIN");
      all.addAll(publish(p, topic, 10));
      assertNothingCountedAndAllDelivered(o, deliveries, all);
    }
  }

  @Test
  void cdcRelaySurvivesADatabaseOutage(EmbeddedRocketMQ mq) throws Exception {
    Schema o = newOutbox();
    String topic = RocketMQExtension.uniqueTopic("cdcdbdown");
    mq.createTopic(topic);
    String role = relayRole(o.ds());
    String name = "dbdown_" + UUID.randomUUID().toString().substring(0, 8);
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = producer(o.ds());
        RocketMQSink sink = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-" + name).build()) {
      CdcRelay relay = cdc(name, o, role, "relay").sink(sink).build();
      relay.start();
      List<String> all = new ArrayList<>(publish(p, topic, 20));
      deliveries.awaitAll(all, Duration.ofSeconds(60));
      lockOut(o.ds(), role);
      all.addAll(publish(p, topic, 30));
      Thread.sleep(OUTAGE.toMillis());
      execute(o.ds(), "ALTER ROLE " + role + " LOGIN");
      all.addAll(publish(p, topic, 10));
      assertNothingCountedAndAllDelivered(o, deliveries, all);
      assertThat(relay.health().restarts()).as("the engine lost its walsender and was restarted").isPositive();
      relay.dropSlot();
    }
  }

  @Test
  void cdcRelaySurvivesABrokerOutage(EmbeddedRocketMQ mq) throws Exception {
    Schema o = newOutbox();
    String topic = RocketMQExtension.uniqueTopic("cdcmqdown");
    mq.createTopic(topic);
    String name = "mqdown_" + UUID.randomUUID().toString().substring(0, 8);
    ConvergePostgres pg = ConvergePostgres.shared();
    try (Deliveries deliveries = new Deliveries(mq, topic); TxnProducer p = producer(o.ds());
        RocketMQSink sink = RocketMQSink.nameServer(mq.nameServerAddress()).group("cdc-" + name).sendTimeout(Duration.ofSeconds(1)).build()) {
      CdcRelay relay = cdc(name, o, pg.user(), pg.password()).sink(sink).build();
      relay.start();
      List<String> all = new ArrayList<>(publish(p, topic, 20));
      deliveries.awaitAll(all, Duration.ofSeconds(60));
      mq.stopBroker();
      try {
        all.addAll(publish(p, topic, 30));
        Thread.sleep(OUTAGE.toMillis());
      } finally {
        mq.startBroker();
      }
      all.addAll(publish(p, topic, 10));
      assertNothingCountedAndAllDelivered(o, deliveries, all);
      relay.dropSlot();
    }
  }
}
