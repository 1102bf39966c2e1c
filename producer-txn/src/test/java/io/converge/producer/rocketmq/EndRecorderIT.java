package io.converge.producer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.producer.micrometer.MicrometerProducerMetrics;
import io.converge.core.Migrations;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/** EndRecorder's writes on the real database: one row per attempt, and a bad record loses only itself. */
class EndRecorderIT {

  /**
   * Issue 17 (review): a unit retried with the same message id publishes a new attempt. Its END failure must get
   * a waiting row of its own; keyed by the id alone it was dropped by the first attempt's resolved row.
   */
  @Test
  void eachAttemptOfAMessageIdHasItsOwnRow() {
    assertThat(recorded("endattempt", "attempt || ' ' || status", (recorder, id) -> {
      recorder.checkedBack(half(id, "a1"), "ROLLBACK", "fenced", Instant.now());
      recorder.notDelivered(half(id, "a2"), "COMMIT", "END COMMIT failed", Instant.now());
    })).containsExactly("a1 RESOLVED", "a2 WAITING");
  }

  /**
   * Issue 17 (review, major): an END of a checkable half message (old enough to be checked back) is recorded first,
   * then a check-back of the same attempt answered UNKNOWN (another instance's batch written later, or a late
   * check-back of the ended unit): the row must stay RESOLVED. The END only updated an existing row before, so
   * the UNKNOWN inserted a WAITING row after it: a false stuck unit.
   */
  @Test
  void anUnknownCheckBackWrittenAfterTheEndLeavesTheRowResolved() {
    assertThat(recorded("endfirst", "status || ' ' || (resolved_at IS NOT NULL)", (recorder, id) -> {
      recorder.ended(half(id, "a1"), "COMMIT", EndRecorder.CHECKABLE);
      recorder.checkedBack(half(id, "a1"), "UNKNOWN", "open", Instant.now());
    })).containsExactly("RESOLVED true");
  }

  /**
   * Issue 17 (review): a batch that fails is written again entry by entry: the bad entry (here an END state the
   * table refuses) is lost alone, counted in txn.end-records.lost; the whole batch was lost before.
   */
  @Test
  void aBadRecordLosesOnlyItselfAndIsCounted() throws Exception {
    DataSource db = ConvergePostgres.shared().newSchema("endbatch");
    Migrations.apply(db, "producer");
    CountDownLatch writing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    String id = io.converge.core.MessageIds.shared().next();
    try (
        EndRecorder recorder = new EndRecorder(gated(db, writing, release), "g", new MicrometerProducerMetrics(registry,
            "g"))) {
      recorder.notDelivered(half(id + "-0", "a"), "COMMIT", "first", Instant.now());
      assertThat(writing.await(10, TimeUnit.SECONDS)).as("the writer holds the first record").isTrue();
      // queued while the writer waits: the next batch is these three, in one transaction
      recorder.notDelivered(half(id + "-1", "a"), "COMMIT", "good", Instant.now());
      recorder.notDelivered(half(id + "-2", "a"), "MAYBE", "bad", Instant.now());
      recorder.notDelivered(half(id + "-3", "a"), "ROLLBACK", "good", Instant.now());
      release.countDown();
      await().atMost(Duration.ofSeconds(10))
          .until(() -> registry.get("txn.end-records.lost").counter().count() == 1.0);
    }
    assertThat(new JdbcTemplate(db).queryForList(
        "SELECT message_id FROM converge_txn_end ORDER BY message_id", String.class))
        .containsExactly(id + "-0", id + "-1", id + "-3");
    assertThat(registry.get("txn.end-records.lost").counter().count()).isEqualTo(1.0);
  }

  /** {@code column} of the rows of one message id, by attempt, after {@code records} were written in a new schema. */
  private static List<String> recorded(String schema, String column, BiConsumer<EndRecorder, String> records) {
    DataSource db = ConvergePostgres.shared().newSchema(schema);
    Migrations.apply(db, "producer");
    String id = io.converge.core.MessageIds.shared().next();
    try (EndRecorder recorder = new EndRecorder(db, "g", io.converge.producer.spi.ProducerMetrics.NONE)) {
      records.accept(recorder, id);
    }
    return new JdbcTemplate(db).queryForList(
        "SELECT " + column + " FROM converge_txn_end WHERE message_id = ? ORDER BY attempt", String.class, id);
  }

  private static EndRecorder.Half half(String id, String attempt) {
    return new EndRecorder.Half(id, "t", "k", null, attempt);
  }

  /** {@code db} whose first getConnection signals {@code writing} and waits for {@code release}. */
  private static DataSource gated(DataSource db, CountDownLatch writing, CountDownLatch release) {
    return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
        (proxy, method, args) -> {
          if (method.getName().equals("getConnection") && writing.getCount() > 0) {
            writing.countDown();
            release.await(10, TimeUnit.SECONDS);
          }
          try {
            return method.invoke(db, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }
}
