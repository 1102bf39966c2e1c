package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.CrashPoints;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The coordinator's crash-point contract, which every broker backend of {@link TxnProducer} passes (one subclass per
 * backend: RocketMQ half messages here, {@code PulsarSagaCrashIT} in pulsar-adapter, which runs this class from the
 * saga module's test-jar). A coordinator in a child JVM ({@link CrashingCoordinatorMain}) applies the first reply of
 * a saga and is halted (Runtime.halt, as kill -9) at a point of that transition's unit of work: just before its
 * database commit, or just after it and before the broker's commit (RocketMQ's END COMMIT, the Pulsar transaction's
 * commit). A survivor in this JVM, a producer of the child's group and a coordinator on the same tables, finishes
 * the saga: it completes, every step's work runs once, no command is lost and no transition is applied twice.
 *
 * <p>Killed before the DB commit, the transition's command is never delivered (the half message is rolled back by
 * its check-back; the Pulsar transaction is aborted at its timeout) and the survivor applies the reply, consumed
 * again, once. Killed after the DB commit, the command reaches its participant while no coordinator runs at all,
 * by the backend's own recovery only (RocketMQ's check-back commits the half message; Pulsar's recovery scan commits
 * the open transaction by id or, once the broker aborted it, re-publishes its messages from the transaction log);
 * then the survivor's coordinator finishes the saga.
 */
@ExtendWith(ChildJvmExtension.class)
public abstract class SagaCrashContract {

  private final Class<? extends SagaCrashBackend> backendClass;
  private final SagaCrashBackend backend;

  /** The contract on {@code backend}, instantiated here and, by name, in the child JVM. */
  protected SagaCrashContract(Class<? extends SagaCrashBackend> backend) {
    this.backendClass = backend;
    try {
      this.backend = backend.getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(backend + " needs a public no-argument constructor", e);
    }
  }

  /** The backend's addresses, handed to {@link SagaCrashBackend} in both JVMs. */
  protected abstract Map<String, String> env();

  /** Creates {@code topic} on the broker. */
  protected abstract void createTopic(String topic);

  /** The saga's topics under {@code prefix}: replies, and each participant's commands and compensations. */
  static List<String> topics(String prefix) {
    List<String> topics = new ArrayList<>(List.of(prefix + OrderSaga.REPLIES));
    for (String p : List.of("inventory", "account", "shipping")) {
      topics.add(prefix + p + "-cmd");
      topics.add(prefix + p + "-comp");
    }
    return topics;
  }

  @ParameterizedTest
  @EnumSource(value = CrashPoints.Point.class, names = {"BEFORE_DB_COMMIT", "AFTER_DB_COMMIT"})
  void aSecondCoordinatorFinishesTheSagaOfAKilledOne(CrashPoints.Point point, ChildJvms jvms) throws Exception {
    ConvergePostgres pg = ConvergePostgres.shared();
    String tag = UUID.randomUUID().toString().substring(0, 8);
    String schema = "saga_crash_b_" + tag;
    try (var c = pg.dataSource().getConnection(); var s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
    }
    DataSource ds = pg.dataSource(schema);
    OrderSaga.migrate(ds);
    backend.migrate(ds);
    String prefix = "sc-" + tag + "-";
    List<String> topics = topics(prefix);
    topics.forEach(this::createTopic);
    String group = "scp-" + tag;
    String id = "crash-" + tag + "-" + point;
    ChildJvm.Builder launch = jvms.launch(CrashingCoordinatorMain.class)
        .database(pg.jdbcUrl(), pg.user(), pg.password(), schema)
        .args(id, point.name(), backendClass.getName(), prefix, group);
    env().forEach((k, v) -> launch.property(CrashingCoordinatorMain.ENV + k, v));
    ChildJvm child = launch.start();
    try {
      assertThat(child.awaitExit(Duration.ofSeconds(90))).as("halted; output:%n%s", child.output())
          .isEqualTo(ChildJvm.HALTED);
      assertThat(child.output()).contains("halted at " + point);
    } finally {
      child.close();
    }
    List<AutoCloseable> open = new ArrayList<>();
    try {
      // the survivor: a producer of the child's group (it recovers the child's units on the broker)
      TxnProducer producer = backend.producer(group, ds, topics, env());
      open.add(producer);
      OrderSaga saga = new OrderSaga(ds, producer, prefix, null, b -> b.pollInterval(Duration.ofMillis(200)));
      open.add(saga.coordinator);
      if (point == CrashPoints.Point.AFTER_DB_COMMIT) {
        assertThat(saga.events(id)).as("the transition committed").endsWith("REPLIED reserve 1", "SENT debit 1");
      } else {
        assertThat(saga.events(id)).as("the transition did not commit").endsWith("SENT reserve 1");
      }
      for (String p : List.of("inventory", "account", "shipping")) { // the saga completes: no compensation topic
        open.add(backend.consume(prefix + p + "-cmd", group + "-s-" + p, saga.participants.get(prefix + p + "-cmd"),
            env()));
      }
      if (point == CrashPoints.Point.AFTER_DB_COMMIT) {
        // no coordinator runs yet: only the backend's recovery can have delivered the debit command
        await().atMost(Duration.ofSeconds(30)).until(() -> saga.effects(id).contains("debit forward"));
      }
      open.add(backend.consume(prefix + OrderSaga.REPLIES, group + "-s-replies", saga.coordinator.replyHandler(),
          env()));
      saga.coordinator.startPolling();
      await().atMost(Duration.ofSeconds(60)).until(() -> "COMPLETED".equals(saga.state(id)));
      assertThat(saga.effects(id)).containsExactly("reserve forward", "debit forward", "ship forward",
          "mark-paid forward");
      assertThat(saga.events(id)).containsOnlyOnce("REPLIED reserve 1", "SENT debit 1", "COMPLETED");
    } finally {
      for (int i = open.size() - 1; i >= 0; i--) {
        open.get(i).close();
      }
    }
  }
}
