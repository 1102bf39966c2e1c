package io.converge.pulsar;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import io.converge.producer.internal.CrashPoints;
import io.converge.testing.Delivered;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A Pulsar broker killed ({@code SIGKILL}) and restarted on its data while units of work are in flight: committed,
 * rolled back, ending while the broker is down, and left open by an instance that "died" after its database commit
 * (their Pulsar transactions only end by the coordinator's timeout after the restart, apache/pulsar#19200). A unit
 * committed iff its row is in {@code restart_unit} (written in the unit). Once Converge's recovery has run, the
 * delivered message ids (deduplicated; duplicates counted) are exactly the committed units', and the time until the
 * topic reads again is measured and printed. The broker starts from
 * {@code ops/deploy/pulsar/broker.conf}: a file that breaks transactions fails this test.
 *
 * <p>A subscription made before the first unit and first read after the restart reads every committed unit: what
 * the broker acknowledged before the kill is still there (the embedded bookie once acknowledged entries it had not
 * written; after a kill its transaction coordinator handed out the ids of forgotten transactions again, and a unit
 * committed after the restart could stay unread). Reads stall at most the transaction timeout after the restart.
 */
class PulsarBrokerRestartIT {

  /** The deployment's settings file, from this module's directory (failsafe's working directory). */
  static final Path BROKER_CONF = Path.of("..", "ops", "deploy", "pulsar", "broker.conf");

  private EmbeddedPulsar pulsar;

  @AfterEach
  void stop() {
    CrashPoints.install(null);
    if (pulsar != null) {
      pulsar.stop();
    }
  }

  @Test
  void afterARestartEveryCommittedUnitIsDeliveredAndNoRolledBackOne() throws Exception {
    assertThat(BROKER_CONF).exists();
    pulsar = EmbeddedPulsar.builder().restartable().brokerSettings(BROKER_CONF).build().start();
    DataSource db = ConvergePostgres.shared().newSchema("pulsarrestart");
    Migrations.apply(db, "producer");
    Migrations.apply(db, "pulsar");
    execute(db, "CREATE TABLE restart_unit (id text PRIMARY KEY)");
    String topic = "restart-" + UUID.randomUUID().toString().substring(0, 8);
    String group = "g-" + UUID.randomUUID().toString().substring(0, 8);
    Set<String> attempted = ConcurrentHashMap.newKeySet();
    ExecutorService units = Executors.newFixedThreadPool(4);
    String late = "late-" + UUID.randomUUID();
    new PulsarSink(pulsar.serviceUrl(), topic, late).close(); // its backlog kept until it is read after the restart
    try (PulsarSink sink = new PulsarSink(pulsar.serviceUrl(), topic);
        TxnProducer producer = PulsarChildFactory.producer(group, topic, db,
            Map.of("serviceUrl", pulsar.serviceUrl()))) {
      for (int i = 0; i < 10; i++) {
        unit(producer, topic, attempted, null);
        String id = MessageIds.shared().next();
        attempted.add(id);
        assertThatThrownBy(() -> producer.inTransaction(tx -> {
          record(tx.connection(), id);
          tx.publish(message(topic, id));
          throw new IllegalStateException("rolled back");
        })).hasMessageContaining("rolled back");
      }
      // left open: the database committed, the instance "died" before the Pulsar commit
      CrashPoints.install(point -> {
        if (point == CrashPoints.Point.AFTER_DB_COMMIT) {
          throw new IllegalStateException("died after the DB commit");
        }
      });
      for (int i = 0; i < 3; i++) {
        assertThatThrownBy(() -> unit(producer, topic, attempted, null)).hasMessage("died after the DB commit");
      }
      CrashPoints.install(null);
      // in flight across the kill: sent in their Pulsar transaction, ending (half commit, half roll back) while
      // the broker is down
      CountDownLatch killed = new CountDownLatch(1);
      CountDownLatch sent = new CountDownLatch(4);
      List<Future<?>> inFlight = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        boolean commit = i % 2 == 0;
        inFlight.add(units.submit(() -> unit(producer, topic, attempted, () -> {
          sent.countDown();
          killed.await(60, TimeUnit.SECONDS);
          if (!commit) {
            throw new IllegalStateException("rolled back in flight");
          }
        })));
      }
      assertThat(sent.await(30, TimeUnit.SECONDS)).as("the in-flight units sent").isTrue();

      Set<String> beforeKill = committed(db);
      long down = System.nanoTime();
      pulsar.kill();
      killed.countDown();
      for (Future<?> f : inFlight) {
        try {
          f.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          // the outcome is in restart_unit: a unit committed iff its row is there
        }
      }
      pulsar.start();
      long restarted = System.nanoTime();
      // a new unit after the restart: how long until one commits and its message is read
      String probe = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (probe == null) {
        try {
          probe = unit(producer, topic, attempted, null);
        } catch (RuntimeException e) {
          if (System.nanoTime() > deadline) {
            throw e;
          }
          TimeUnit.MILLISECONDS.sleep(200); // retrying a refused unit (coordinator not reconnected yet), deadline 90 s
        }
      }
      long firstCommit = System.nanoTime();
      String probeId = probe;
      // a topic's reads stop at the first message of a transaction still open; those open at the crash end at their
      // timeout at the latest (the coordinator aborts them), so reads stall at most that long (ops/deploy/README.md)
      await("the probe read within the transaction timeout (plus 20 s for a loaded machine)")
          .atMost(PulsarChildFactory.TXN_TIMEOUT.plusSeconds(20)).pollInterval(Duration.ofMillis(50))
          .until(() -> ids(sink.received()).contains(probeId));
      long readsAgain = System.nanoTime();
      Set<String> committed = committed(db);
      await("every committed unit delivered").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
          .until(() -> ids(sink.received()).containsAll(committed));
      long allDelivered = System.nanoTime();
      try (PulsarSink fresh = new PulsarSink(pulsar.serviceUrl(), topic, late)) {
        await("a subscription first read after the restart reads every committed unit")
            .atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
            .untilAsserted(() -> assertThat(ids(fresh.received()))
                .as("read after the restart (units committed before the kill: %s)", beforeKill)
                .containsAll(committed));
        assertThat(ids(fresh.received())).as("what a subscription first read after the restart reads")
            .isEqualTo(committed);
      }
      List<Delivered> got = sink.received();
      Set<String> unique = ids(got);
      System.out.printf("PulsarBrokerRestartIT: down %d ms (kill to ready); after the restart: first commit %d ms, "
          + "topic reads again %d ms, all %d committed units delivered %d ms (of %d attempted); %d duplicates "
          + "(deduplicated by message id)%n", ms(restarted - down), ms(firstCommit - restarted),
          ms(readsAgain - restarted), committed.size(), ms(allDelivered - restarted), attempted.size(),
          got.size() - unique.size());
      assertThat(committed).hasSizeGreaterThanOrEqualTo(10 + 3 + 1).isSubsetOf(attempted);
      // delivered iff committed: every committed unit, no rolled-back one
      assertThat(unique).isEqualTo(committed);
    } finally {
      units.shutdownNow();
    }
  }

  /**
   * A unit of work: records its message id in {@code restart_unit} and publishes it, then runs {@code then} (null:
   * nothing) before it ends.
   */
  private static String unit(TxnProducer producer, String topic, Set<String> attempted, Pause then) {
    String id = MessageIds.shared().next();
    attempted.add(id);
    producer.inTransaction(tx -> {
      record(tx.connection(), id);
      tx.publish(message(topic, id));
      if (then != null) {
        then.run();
      }
      return null;
    });
    return id;
  }

  /** What an in-flight unit does after its send. */
  private interface Pause {

    void run() throws Exception;
  }

  private static void record(Connection c, String id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO restart_unit (id) VALUES (?)")) {
      ps.setString(1, id);
      ps.executeUpdate();
    }
  }

  private static Set<String> committed(DataSource db) throws SQLException {
    Set<String> ids = new HashSet<>();
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id FROM restart_unit")) {
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
    }
    return ids;
  }

  private static void execute(DataSource db, String sql) throws SQLException {
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  private static Set<String> ids(List<Delivered> got) {
    Set<String> ids = new HashSet<>();
    got.forEach(d -> ids.add(d.id()));
    return ids;
  }

  private static OutgoingMessage message(String topic, String id) {
    return OutgoingMessage.builder(topic).id(id).payload(id.getBytes(UTF_8)).build();
  }

}
