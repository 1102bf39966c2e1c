package io.converge.ops.doctor;

import io.converge.consumer.DedupPurger;
import io.converge.consumer.http.IdempotencyKeyPurger;
import io.converge.outbox.Outbox;
import java.time.Duration;
import io.converge.producer.internal.TxnLog;
import java.time.Clock;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.ops.CliRun;
import io.converge.ops.CliSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.impl.ClientRemotingProcessor;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code converge doctor} against the embedded servers: configured as Converge needs (every check PASS, exit 0), and
 * configured wrong on purpose (a schema without migrations, an unread CDC slot holding WAL, a role with
 * {@code synchronous_commit = off}, a broker whose check window is shorter than the producers' local-transaction
 * timeout, missing topics): each named FAIL or WARN with its fix, exit 2.
 */
@ExtendWith(PulsarExtension.class)
class DoctorIT {

  /** A broker of this class alone, with RocketMQ's default transaction settings (6 s, 15 × 30 s). */
  private static EmbeddedRocketMQ rocketmq;
  private static MQClientAPIImpl admin;

  @BeforeAll
  static void broker() {
    rocketmq = EmbeddedRocketMQ.builder().build().start();
    ClientConfig config = new ClientConfig();
    config.setNamesrvAddr(rocketmq.nameServerAddress());
    admin = new MQClientAPIImpl(new NettyClientConfig(), new ClientRemotingProcessor(null), null, config);
    admin.start();
  }

  @AfterAll
  static void stop() {
    admin.shutdown();
    rocketmq.close();
  }

  @Test
  void aDeploymentConfiguredForConvergePassesEveryCheck(EmbeddedPulsar pulsar) throws Exception {
    brokerSettings("30000", "15");
    CliSchema db = CliSchema.create("doctorok", "producer", "pulsar", "consumer", "idempotency", "outbox", "cdc");
    new DedupPurger(db.dataSource(), DedupPurger.DEFAULT_RETENTION, 100, Clock.systemUTC()).purgeExpired(1);
    new IdempotencyKeyPurger(db.dataSource(), 100).purgeExpired(1);
    Outbox.on(db.dataSource()).purge(Duration.ofDays(1), 100, n -> {
    });
    new TxnLog(db.dataSource()).purge("orders", 100);
    String topic = RocketMQExtension.uniqueTopic("doctor");
    rocketmq.createTopic(topic);
    String pulsarTopic = PulsarExtension.uniqueTopic("doctor");
    createPartitionedTopic(pulsar, pulsarTopic, 2);

    CliRun run = doctor(db, "--namesrv", rocketmq.nameServerAddress(), "--topic", topic, "--pulsar-url",
        pulsar.serviceUrl(), "--pulsar-admin-url", pulsar.httpUrl(), "--pulsar-topic", pulsarTopic);

    assertThat(run.status()).as(run.out() + run.err()).isZero();
    assertThat(run.out()).doesNotContain("WARN ").doesNotContain("FAIL ")
        .contains("PASS  rocketmq." + rocketmq.brokerName() + ".transactions")
        .contains("check window 7.5 min > 2 × local-transaction-timeout 30 s")
        .contains("PASS  rocketmq.topic." + topic).contains("4 write queues on 1 of 1 broker groups")
        .contains("PASS  pulsar.transactions").contains("PASS  pulsar.coordinators.connect")
        .contains("PASS  pulsar.coordinators ")
        .contains("PASS  pulsar.topic." + local(pulsarTopic)).contains("partitioned, 2 partitions")
        .contains("PASS  postgres.fsync").contains("PASS  postgres.synchronous_commit")
        .contains("PASS  postgres.wal_level").contains("wal_level = logical")
        .contains("PASS  postgres.migrations.producer").contains("PASS  postgres.migrations.cdc")
        .contains("PASS  postgres.stuck ")
        .containsPattern("doctor: \\d+ PASS, 0 WARN, 0 FAIL");
  }

  @Test
  void aDeploymentConfiguredWrongFailsEachCheckWithItsFix(EmbeddedPulsar pulsar) throws Exception {
    brokerSettings("5000", "3"); // check window 15 s < the producers' 30 s local-transaction timeout
    CliSchema db = CliSchema.create("doctorbad"); // no migrations
    String slot = "doctor_" + db.schema();
    String role = "doctor_" + db.schema();
    db.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')",
        "CREATE TABLE filler (v text)", "INSERT INTO filler SELECT repeat('x', 100) FROM generate_series(1, 1000)",
        "CREATE ROLE " + role + " LOGIN PASSWORD 'doctor'", "ALTER ROLE " + role + " SET synchronous_commit = off",
        "GRANT USAGE ON SCHEMA " + db.schema() + " TO " + role);
    try {
      String missingTopic = RocketMQExtension.uniqueTopic("absent");
      String missingPulsar = PulsarExtension.uniqueTopic("absent");
      ConvergePostgres pg = db.pg();
      CliRun run = CliRun.of("doctor", "--namesrv", rocketmq.nameServerAddress(), "--topic", missingTopic,
          "--pulsar-admin-url", pulsar.httpUrl(), "--pulsar-topic", missingPulsar, "--jdbc-url", pg.jdbcUrl(),
          "--user", role, "--password", "doctor", "--schema", db.schema());

      assertThat(run.status()).as(run.out() + run.err()).isEqualTo(2);
      assertThat(run.out())
          .contains("FAIL  rocketmq." + rocketmq.brokerName() + ".transactions")
          .contains("check window 15 s, not longer than the producers' local-transaction-timeout 30 s")
          .contains("fix: raise transactionCheckMax or transactionCheckInterval")
          .contains("FAIL  rocketmq.topic." + missingTopic).contains("mqadmin updateTopic")
          .contains("FAIL  pulsar.topic." + local(missingPulsar)).contains("does not exist")
          .contains("FAIL  postgres.synchronous_commit").contains("durability risk")
          .contains("FAIL  postgres.migrations").contains("no Converge schema history")
          .contains("WARN  postgres.slot." + slot).contains("no reader connected")
          .contains("pg_drop_replication_slot('" + slot + "')")
          .containsPattern("doctor: \\d+ PASS, [1-9]\\d* WARN, [1-9]\\d* FAIL");

      CliRun strict = db.run("doctor", "--max-slot-wal-mb", "0");
      assertThat(strict.status()).isEqualTo(2);
      assertThat(strict.out()).contains("FAIL  postgres.slot." + slot).contains("over --max-slot-wal-mb 0 kB");
    } finally {
      db.execute("SELECT pg_drop_replication_slot('" + slot + "')", "DROP OWNED BY " + role, "DROP ROLE " + role);
      brokerSettings("30000", "15");
    }
  }

  @Test
  void stuckItemsPastTheirThresholdAreWarnings() throws Exception {
    CliSchema db = CliSchema.create("doctorstuck", "producer", "pulsar");
    new TxnLog(db.dataSource()).purge("orders", 100);
    db.execute("INSERT INTO converge_pulsar_txn (txn_most, txn_least, producer_group, deadline, created_at, attempts,"
        + " parked_at, reason) VALUES (0, 42, 'orders', now() - interval '3 hours', now() - interval '3 hours', 10,"
        + " now() - interval '2 hours', 'Pulsar refused message m-1 on gone: TopicTerminatedException')",
        // logged in one row (pulsar migration V4), next to the one an earlier version logged above
        "INSERT INTO converge_pulsar_unit (txn_most, txn_least, producer_group, deadline, created_at, attempts,"
            + " parked_at, reason, message_ids, topics, msg_keys, properties, payloads) VALUES (0, 43, 'orders', now(),"
            + " now() - interval '1 hour', 10, now() - interval '30 minutes', 'Pulsar refused message m-2 on gone',"
            + " '{m-2}', '{gone}', '{NULL}', '{NULL}', ARRAY['\\x00'::bytea])");

    CliRun run = db.run("doctor");

    assertThat(run.status()).as(run.out() + run.err()).isEqualTo(1);
    assertThat(run.out()).contains("WARN  postgres.stuck.pulsar-recovery").contains("2 transactions parked by recovery")
        .contains("fix: converge pulsar parked").doesNotContain("FAIL ")
        .containsPattern("doctor: \\d+ PASS, 1 WARN, 0 FAIL");
  }

  @Test
  void aMissingDayPartitionIsAWarningUntilThePurgeCreatesIt() throws Exception {
    CliSchema db = CliSchema.create("doctorparts", "consumer", "producer");

    CliRun run = db.run("doctor");

    assertThat(run.out()).contains("WARN  postgres.partitions.converge_dedup").contains("no partition for [")
        .contains("fix: run the dedup purge")
        .contains("WARN  postgres.partitions.converge_txn_log")
        .contains("units still log their outcome (in the catch-all)")
        .contains("fix: run the transaction log's purge");
    new DedupPurger(db.dataSource(), DedupPurger.DEFAULT_RETENTION, 100, Clock.systemUTC()).purgeExpired(1);
    new TxnLog(db.dataSource()).purge("orders", 100);
    assertThat(db.run("doctor").out()).contains("PASS  postgres.partitions.converge_dedup")
        .contains("PASS  postgres.partitions.converge_txn_log");
  }

  @Test
  void aMissingIdempotencyKeyPartitionIsAWarningUntilThePurgeCreatesIt() throws Exception {
    CliSchema db = CliSchema.create("doctoridem", "idempotency");

    CliRun run = db.run("doctor");

    assertThat(run.out()).contains("WARN  postgres.partitions.converge_idempotency_key")
        .contains("no partition for [").contains("fix: run the Idempotency-Key purge")
        .doesNotContain("postgres.partitions.converge_dedup");
    new IdempotencyKeyPurger(db.dataSource(), 100).purgeExpired(1);
    assertThat(db.run("doctor").out()).contains("PASS  postgres.partitions.converge_idempotency_key");
  }

  @Test
  void aMissingOutboxPartitionIsAWarningUntilThePurgeCreatesIt() throws Exception {
    CliSchema db = CliSchema.create("doctoroparts", "producer", "outbox");

    CliRun run = db.run("doctor");

    assertThat(run.out()).contains("WARN  postgres.partitions.converge_outbox").contains("no partition for [")
        .contains("fix: run the outbox purge");
    Outbox.on(db.dataSource()).purge(Duration.ofDays(1), 100, n -> {
    });
    assertThat(db.run("doctor").out()).contains("PASS  postgres.partitions.converge_outbox");
  }

  @Test
  void withNothingToCheckItExitsTwo() {
    CliRun help = CliRun.of("doctor", "--help"); // the README's line
    assertThat(help.status()).isZero();
    assertThat(help.out()).contains("--namesrv", "--pulsar-admin-url", "--jdbc-url", "--max-slot-wal-mb");
    CliRun.of("doctor").assertFails(2, "nothing to check");
    CliRun.of("doctor", "--topic", "t").assertFails(2, "--topic needs --namesrv");
  }

  private static String local(String topic) {
    return topic.substring(topic.lastIndexOf('/') + 1);
  }

  private static CliRun doctor(CliSchema db, String... args) {
    List<String> all = new ArrayList<>(List.of("doctor"));
    all.addAll(List.of(args));
    return db.run(all.toArray(String[]::new));
  }

  private static void brokerSettings(String checkInterval, String checkMax) throws Exception {
    Properties p = new Properties();
    p.setProperty("transactionCheckInterval", checkInterval);
    p.setProperty("transactionCheckMax", checkMax);
    admin.updateBrokerConfig(rocketmq.brokerAddress(), p, 5_000);
  }

  private static void createPartitionedTopic(EmbeddedPulsar pulsar, String topic, int partitions) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest
        .newBuilder(URI.create(pulsar.httpUrl() + "/admin/v2/" + topic.replace("://", "/") + "/partitions"))
        .header("Content-Type", "application/json")
        .PUT(HttpRequest.BodyPublishers.ofString(Integer.toString(partitions)))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isBetween(200, 299);
  }
}
