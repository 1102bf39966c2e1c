package io.converge.ops.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.console.inspect.Inspector;
import io.converge.console.inspect.Inspector.Filter;
import io.converge.console.inspect.StuckItem;
import io.converge.console.inspect.StuckKind;
import io.converge.console.trace.Timeline;
import io.converge.console.trace.TimelineEvent;
import io.converge.console.web.Console;
import io.converge.console.web.ConsoleRequest;
import io.converge.console.web.ConsoleResponse;
import io.converge.ops.CliRun;
import io.converge.ops.CliSchema;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.producer.internal.CrashPoints;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A RocketMQ unit whose END does not reach the broker, on the embedded broker and PostgreSQL: the unit commits,
 * its END COMMIT fails (the {@code BROKER_END} test hook throws on the group's END lane), and the broker's
 * check-back is held (the {@code CHECK_BACK} hook pauses the group's check-back thread). The console's page of
 * the kind, the {@link Inspector} and {@code converge trace} show the unit waiting, with its age and reason; once the
 * check-back is let through it answers COMMIT from the log, the message is delivered by the broker and the unit
 * leaves the list, its timeline saying how it was resolved. Nothing is written on the unit's path: the record
 * comes from the END lane and the check-back thread.
 */
@ExtendWith(RocketMQExtension.class)
class RocketMQUnitsIT {

  private static CliSchema db;
  private static DataSource ds;
  private static EmbeddedRocketMQ mq;

  @BeforeAll
  static void setUp(EmbeddedRocketMQ server) throws Exception {
    mq = server;
    db = CliSchema.create("rmqunits", "producer");
    ds = db.dataSource();
  }

  @AfterEach
  void uninstall() {
    CrashPoints.install(null);
  }

  @Test
  void aUnitWhoseEndFailedWaitsForItsCheckBackWithAgeAndReasonAndLeavesOnceResolved() throws Exception {
    String group = "units-" + UUID.randomUUID().toString().substring(0, 8);
    String topic = "units-" + UUID.randomUUID().toString().substring(0, 8);
    mq.createTopic(topic);
    CountDownLatch checkBack = new CountDownLatch(1);
    CrashPoints.install(point -> {
      String thread = Thread.currentThread().getName();
      if (point == CrashPoints.Point.BROKER_END && thread.startsWith("converge-end-" + group + "-")) {
        throw new IllegalStateException("END lost by the test");
      }
      if (point == CrashPoints.Point.CHECK_BACK && thread.startsWith("converge-checkback-" + group)) {
        try {
          checkBack.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    try (TxnProducer producer = TxnProducer.builder().group(group).dataSource(ds)
        .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics(topic).build()) {
      String key = "acct-" + UUID.randomUUID();
      String id = producer.inTransaction(tx -> tx.publish(OutgoingMessage.builder(topic).key(key)
          .tenant("t1").payload("debit".getBytes(StandardCharsets.UTF_8)).build()));

      Inspector inspector = Inspector.of(ds);
      StuckItem item = await().atMost(Duration.ofSeconds(10)).until(() -> units(inspector, id), l -> l.size() == 1)
          .get(0);
      // one item per attempt (V6): its id names the attempt, and the trace takes it
      assertThat(item.id()).isEqualTo(id + ":" + item.details().get("attempt"));
      assertThat(item.details().get("attempt")).isNotBlank();
      assertThat(item.key()).isEqualTo(key);
      assertThat(item.topic()).isEqualTo(topic);
      assertThat(item.tenant()).isEqualTo("t1");
      assertThat(item.reason()).startsWith("END COMMIT failed: java.lang.IllegalStateException: END lost by the test")
          .endsWith("waiting for the broker's check-back");
      assertThat(item.details()).containsEntry("group", group).containsEntry("END", "COMMIT");
      assertThat(item.age()).isGreaterThanOrEqualTo(Duration.ZERO).isLessThan(Duration.ofSeconds(30));
      assertThat(inspector.summary(StuckKind.ROCKETMQ_UNIT).total()).isGreaterThanOrEqualTo(1);
      // the console's page of the kind (every age), and no ticket action: the check-back resolves it
      Console console = Console.builder().dataSource(ds).build();
      ConsoleResponse page = console.handle(new ConsoleRequest("GET", "/kind/rocketmq-unit",
          Map.of("minAge", "0s", "key", key), null));
      assertThat(page.status()).isEqualTo(200);
      assertThat(page.html()).contains(id).contains("END COMMIT failed").doesNotContain("resolve-txn-ticket");
      CliRun trace = db.run("trace", key);
      assertThat(trace.status()).as(trace.err()).isZero();
      assertThat(trace.out()).contains(id).contains("END COMMIT did not reach the broker");
      assertThat(Timeline.of(ds).trace(item.id()).stream().map(TimelineEvent::what).toList())
          .contains("END COMMIT did not reach the broker");

      checkBack.countDown();
      await().atMost(Duration.ofSeconds(20)).until(() -> units(inspector, id).isEmpty());
      List<String> timeline = Timeline.of(ds).trace(id).stream().map(TimelineEvent::what).toList();
      assertThat(timeline).contains("END COMMIT did not reach the broker", "transaction log: COMMITTED")
          .anyMatch(what -> what.startsWith("check-back answered COMMIT: resolved"))
          .contains("END record resolved");
    }
  }

  private static List<StuckItem> units(Inspector inspector, String id) {
    return inspector.list(StuckKind.ROCKETMQ_UNIT, Filter.all()).stream().filter(i -> i.id().startsWith(id + ":"))
        .toList();
  }
}
