package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.slf4j.LoggerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link ConsumerOps#redrive}: ops marks a parked message, and the consumer's release round
 * ({@link IdempotentHandler#releaseHeld}, which the bindings run on a schedule) runs it through its handler,
 * then the messages held behind it, in order. A re-drive that fails leaves the row parked as
 * {@code REDRIVE_FAILED} with the failure (no retry loop), and it can be marked again. A technical failure is
 * retried after the policy's backoff at a later round, never by sleeping on the release thread.
 */
@ExtendWith(PostgresExtension.class)
class RedriveIT {

  /** The topic of {@link #message(String, String)}: the handlers' one topic. */
  private static final List<String> CHARGES = List.of("charges");

  @Test
  void aMarkedDeadLetterRunsThroughItsHandlerThenTheHeldOnesAndAFailedReDriveStaysParked(DataSource ds)
      throws Exception {
    Migrations.apply(ds, "consumer");
    AtomicBoolean failing = new AtomicBoolean(true);
    List<String> ran = new CopyOnWriteArrayList<>();
    IdempotentHandler handler = IdempotentHandler.builder().group("billing").dataSource(ds)
        .policy(FailurePolicy.defaults().withMaxAttempts(1).withBackoff(Duration.ofMillis(1), Duration.ofMillis(2)))
        .handler((c, m) -> {
          if (failing.get()) {
            throw new IllegalStateException("ledger locked");
          }
          ran.add(m.header("converge-message-id"));
        }).build();
    assertThat(handler.handle(message("charge-1"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(handler.handle(message("charge-2"))).as("behind the parked one").isEqualTo(Outcome.HELD);
    long dlqId = count(ds, "SELECT id FROM converge_dlq WHERE message_id = 'charge-1'");
    ConsumerOps ops = ConsumerOps.of(ds);

    assertThat(handler.releaseHeld(CHARGES)).as("nothing marked, nothing runs").isZero();
    assertThat(ops.redrive(dlqId)).isTrue();
    assertThat(ops.redrive(dlqId)).as("already marked").isFalse();
    assertThat(handler.releaseHeld(CHARGES)).as("the handler still fails").isZero();
    assertThat(count(ds, "SELECT count(*) FROM converge_dlq WHERE id = " + dlqId
        + " AND status = 'PARKED' AND reason_code = 'REDRIVE_FAILED' AND reason LIKE '%ledger locked%'")).isOne();
    assertThat(handler.releaseHeld(CHARGES)).as("a failed re-drive is not retried on its own").isZero();
    assertThat(ops.redrive(dlqId)).as("marked again, still failing").isTrue();
    assertThat(handler.releaseHeld(CHARGES)).isZero();
    String reason = string(ds, "SELECT reason FROM converge_dlq WHERE id = " + dlqId);
    assertThat(reason).as("the original reason once, then the last failure: no mark of a mark")
        .startsWith("marked for re-drive (was RETRIES_EXHAUSTED: ").contains("ledger locked");
    assertThat(reason.split("\\(was ", -1)).hasSize(2);
    assertThat(reason.split("; re-drive failed: ", -1)).hasSize(2);

    failing.set(false);
    assertThat(ops.redrive(dlqId)).as("marked again after the fix").isTrue();
    assertThat(handler.releaseHeld(CHARGES)).isEqualTo(2);
    assertThat(ran).containsExactly("charge-1", "charge-2");
    assertThat(count(ds, "SELECT count(*) FROM converge_dlq WHERE status = 'RESUMED' AND consumer_group = 'billing'"))
        .isEqualTo(2);
    assertThat(ops.redrive(dlqId)).as("no longer parked").isFalse();
  }

  @Test
  void aTransientFailureIsRetriedWithTheBackoffBeforeTheReDriveCountsAsFailed(DataSource ds) throws Exception {
    Migrations.apply(ds, "consumer");
    AtomicInteger runs = new AtomicInteger();
    AtomicInteger failFor = new AtomicInteger(1); // the first delivery's one attempt, then one re-drive attempt
    IdempotentHandler parking = parking(ds, "transient");
    assertThat(parking.handle(message("t-1"))).isEqualTo(Outcome.DEAD_LETTERED);
    IdempotentHandler handler = IdempotentHandler.builder().group("transient").dataSource(ds)
        .policy(FailurePolicy.defaults().withMaxAttempts(3).withBackoff(Duration.ofMillis(1), Duration.ofMillis(2)))
        .handler((c, m) -> {
          runs.incrementAndGet();
          if (failFor.getAndDecrement() > 0) {
            throw new IllegalStateException("ledger briefly locked");
          }
        }).build();
    long dlqId = count(ds, "SELECT id FROM converge_dlq WHERE message_id = 't-1'");
    assertThat(ConsumerOps.of(ds).redrive(dlqId)).isTrue();
    assertThat(handler.releaseHeld(CHARGES)).as("the failed attempt backs off: retried at a later round").isZero();
    await().atMost(Duration.ofSeconds(10)).until(() -> handler.releaseHeld(CHARGES), ran -> ran == 1);
    assertThat(runs).hasValue(2);
    assertThat(string(ds, "SELECT status FROM converge_dlq WHERE id = " + dlqId)).isEqualTo("RESUMED");
  }

  /**
   * The release thread does not sleep out a re-drive's backoff: the rest of the round (another key's re-drive and
   * the message held behind it) runs at once, and the one backing off is retried at a later round.
   */
  @Test
  void aReDriveBackingOffDoesNotStallTheOtherMessagesOfTheRound(DataSource ds) throws Exception {
    Migrations.apply(ds, "consumer");
    IdempotentHandler parking = parking(ds, "stall");
    assertThat(parking.handle(message("a-1", "key-a"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(parking.handle(message("b-1", "key-b"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(parking.handle(message("b-2", "key-b"))).isEqualTo(Outcome.HELD);
    List<String> ran = new CopyOnWriteArrayList<>();
    IdempotentHandler handler = failingOnceOn(ds, "stall", "a-1", ran);
    long a1 = count(ds, "SELECT id FROM converge_dlq WHERE message_id = 'a-1'");
    assertThat(ConsumerOps.of(ds).redrive(a1)).isTrue();
    assertThat(ConsumerOps.of(ds).redrive(count(ds, "SELECT id FROM converge_dlq WHERE message_id = 'b-1'"))).isTrue();

    assertThat(handler.releaseHeld(CHARGES)).as("b-1 and the b-2 held behind it, without waiting out a-1's backoff")
        .isEqualTo(2);
    assertThat(ran).containsExactly("b-1", "b-2");
    assertThat(string(ds, "SELECT status || ' ' || reason_code FROM converge_dlq WHERE id = " + a1))
        .as("still marked: retried later, not failed").isEqualTo("PARKED REDRIVE");
    await().atMost(Duration.ofSeconds(10)).until(() -> handler.releaseHeld(CHARGES), n -> n == 1);
    assertThat(ran).containsExactly("b-1", "b-2", "a-1");
    assertThat(string(ds, "SELECT status FROM converge_dlq WHERE id = " + a1)).isEqualTo("RESUMED");
  }

  /** Likewise a held message that fails when released: the other keys' held messages run in the same round. */
  @Test
  void aHeldMessageBackingOffDoesNotStallTheHeldMessagesOfOtherKeys(DataSource ds) throws Exception {
    Migrations.apply(ds, "consumer");
    IdempotentHandler parking = parking(ds, "heldstall");
    for (String key : List.of("key-a", "key-b")) {
      assertThat(parking.handle(message(key + "-1", key))).isEqualTo(Outcome.DEAD_LETTERED);
      assertThat(parking.handle(message(key + "-2", key))).isEqualTo(Outcome.HELD);
      assertThat(ConsumerOps.of(ds).discard(count(ds, "SELECT id FROM converge_dlq WHERE message_id = '" + key
          + "-1'"))).isTrue();
    }
    List<String> ran = new CopyOnWriteArrayList<>();
    IdempotentHandler handler = failingOnceOn(ds, "heldstall", "key-a-2", ran);

    assertThat(handler.releaseHeld(CHARGES)).as("key-b-2 at once, without waiting out key-a-2's backoff").isOne();
    assertThat(ran).containsExactly("key-b-2");
    await().atMost(Duration.ofSeconds(10)).until(() -> handler.releaseHeld(CHARGES), n -> n == 1);
    assertThat(ran).containsExactly("key-b-2", "key-a-2");
  }

  /**
   * Issue 17 (review): with a page (100) of heads backing off, the round lists the next page past them; it listed
   * the same 100 again and ended, so a head behind them waited for the backoffs of all.
   */
  @Test
  void aFullPageOfHeldMessagesBackingOffDoesNotStallTheHeadsAfterIt(DataSource ds) throws Exception {
    Migrations.apply(ds, "consumer");
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      keys.add("key-" + (1000 + i));
    }
    keys.add("key-z");
    // the 101 heads are made by the product's own calls, on pooled connections: the test's data source opens a new
    // PostgreSQL connection (a server process) for every call, which made this set-up take 25 s
    try (HikariDataSource pool = pool(ds)) {
      IdempotentHandler parking = parking(pool, "heldpage");
      ConsumerOps ops = ConsumerOps.of(pool);
      for (String key : keys) {
        assertThat(parking.handle(message(key + "-1", key))).isEqualTo(Outcome.DEAD_LETTERED);
        assertThat(parking.handle(message(key + "-2", key))).isEqualTo(Outcome.HELD);
        assertThat(ops.discard(count(pool, "SELECT id FROM converge_dlq WHERE consumer_group = 'heldpage'"
            + " AND message_id = '" + key + "-1'"))).isTrue();
      }
    }
    List<String> ran = new CopyOnWriteArrayList<>();
    IdempotentHandler handler = failingOnceOn(ds, "heldpage", id -> !id.equals("key-z-2"), Duration.ofMinutes(5),
        ran);

    assertThat(handler.releaseHeld(CHARGES)).as("key-z-2, past the page of heads backing off").isOne();
    assertThat(ran).containsExactly("key-z-2");
  }

  @Test
  void twoInstancesReDriveAMarkedMessageOnceAndNeitherReportsAFalseFailure(DataSource ds) throws Exception {
    Migrations.apply(ds, "consumer");
    IdempotentHandler parking = parking(ds, "racing");
    assertThat(parking.handle(message("r-1"))).isEqualTo(Outcome.DEAD_LETTERED);
    AtomicInteger runs = new AtomicInteger();
    MessageHandler slow = (c, m) -> {
      runs.incrementAndGet();
      Thread.sleep(300); // holds the row while the other instance looks for marked rows
    };
    List<IdempotentHandler> instances = List.of(
        IdempotentHandler.builder().group("racing").dataSource(ds).handler(slow).build(),
        IdempotentHandler.builder().group("racing").dataSource(ds).handler(slow).build());
    long dlqId = count(ds, "SELECT id FROM converge_dlq WHERE message_id = 'r-1'");
    assertThat(ConsumerOps.of(ds).redrive(dlqId)).isTrue();

    Logger logger = (Logger) LoggerFactory.getLogger("io.converge.consumer.internal.ParkedMessages");
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    logger.addAppender(logged);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Integer>> ran = new ArrayList<>();
      for (IdempotentHandler instance : instances) {
        ran.add(pool.submit(() -> {
          go.await();
          return instance.releaseHeld(CHARGES);
        }));
      }
      go.countDown();
      assertThat(ran.get(0).get(10, TimeUnit.SECONDS) + ran.get(1).get(10, TimeUnit.SECONDS)).isOne();
    } finally {
      pool.shutdownNow();
      logger.detachAppender(logged);
    }
    assertThat(runs).hasValue(1);
    assertThat(string(ds, "SELECT status FROM converge_dlq WHERE id = " + dlqId)).isEqualTo("RESUMED");
    assertThat(logged.list).extracting(ILoggingEvent::getFormattedMessage)
        .noneMatch(text -> text.contains("failed"));
  }

  /**
   * Issue 31.4: one group consuming two topics (a handler per topic, or one Pulsar subscription on both) releases
   * and re-drives each topic's rows through that topic's handler only; the same key on two topics is two lines.
   */
  @Test
  void aGroupOnTwoTopicsReleasesAndReDrivesEachTopicThroughItsOwnHandler(DataSource ds) throws Exception {
    Migrations.apply(ds, "consumer");
    AtomicBoolean failing = new AtomicBoolean(true);
    List<String> charged = new CopyOnWriteArrayList<>();
    List<String> refunded = new CopyOnWriteArrayList<>();
    IdempotentHandler charges = recording(ds, "two-topics", failing, charged);
    IdempotentHandler refunds = recording(ds, "two-topics", failing, refunded);
    assertThat(charges.handle(message("charges", "c-1", "cust-1"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(charges.handle(message("charges", "c-2", "cust-1"))).isEqualTo(Outcome.HELD);
    assertThat(refunds.handle(message("refunds", "r-1", "cust-1"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(refunds.handle(message("refunds", "r-2", "cust-1"))).isEqualTo(Outcome.HELD);
    assertThat(refunds.handle(message("refunds", "r-3", "cust-2"))).isEqualTo(Outcome.DEAD_LETTERED);
    failing.set(false);
    ConsumerOps ops = ConsumerOps.of(ds);
    assertThat(ops.discard(Long.parseLong(twoTopicsRow(ds, "id", "r-1")))).isTrue();
    assertThat(ops.redrive(Long.parseLong(twoTopicsRow(ds, "id", "r-3")))).isTrue();

    assertThat(charges.resume(Long.parseLong(twoTopicsRow(ds, "id", "c-1"))))
        .isEqualTo(Outcome.PROCESSED);
    assertThat(charges.releaseHeld(List.of("charges"))).as("the refunds' rows are not the charges handler's").isZero();
    assertThat(charged).containsExactly("c-1", "c-2");
    assertThat(refunded).isEmpty();
    assertThat(twoTopicsRow(ds, "reason_code", "r-2")).isEqualTo("HELD");
    assertThat(twoTopicsRow(ds, "reason_code", "r-3")).isEqualTo("REDRIVE");

    assertThat(refunds.releaseHeld(List.of("refunds"))).as("r-3 re-driven, r-2 released").isEqualTo(2);
    assertThat(refunded).containsExactly("r-3", "r-2");
    assertThat(charged).containsExactly("c-1", "c-2");
    assertThat(count(ds, "SELECT count(*) FROM converge_dedup WHERE consumer_group = 'two-topics'"
        + " AND outcome = 'PROCESSED' AND topic = 'refunds'")).isEqualTo(2);
  }

  /** {@code column} of the parked row of group two-topics and {@code messageId}, as text. */
  private static String twoTopicsRow(DataSource ds, String column, String messageId) throws Exception {
    return string(ds, "SELECT " + column + " FROM converge_dlq WHERE consumer_group = 'two-topics' AND message_id = '"
        + messageId + "' AND status = 'PARKED'");
  }

  /** A handler of {@code group} with 1 attempt that fails while {@code failing} and records the ids it ran. */
  private static IdempotentHandler recording(DataSource ds, String group, AtomicBoolean failing, List<String> ran) {
    return IdempotentHandler.builder().group(group).dataSource(ds).policy(FailurePolicy.defaults().withMaxAttempts(1))
        .handler((c, m) -> {
          if (failing.get()) {
            throw new IllegalStateException("ledger locked");
          }
          ran.add(m.header("converge-message-id"));
        }).build();
  }

  /** A handler of {@code group} that parks every message at its first failure. */
  private static IdempotentHandler parking(DataSource ds, String group) {
    return IdempotentHandler.builder().group(group).dataSource(ds).policy(FailurePolicy.defaults().withMaxAttempts(1))
        .handler((c, m) -> {
          throw new IllegalStateException("ledger locked");
        }).build();
  }

  /**
   * A handler of {@code group} with 3 attempts and a 1 s backoff that fails the first run of message
   * {@code failingId} only and records the ids it ran in {@code ran}.
   */
  private static IdempotentHandler failingOnceOn(DataSource ds, String group, String failingId, List<String> ran) {
    return failingOnceOn(ds, group, failingId::equals, Duration.ofSeconds(1), ran);
  }

  /** The same, failing the first run of every message whose id is {@code failing}, backing off {@code backoff}. */
  private static IdempotentHandler failingOnceOn(DataSource ds, String group, Predicate<String> failing,
      Duration backoff, List<String> ran) {
    Set<String> failed = ConcurrentHashMap.newKeySet();
    return IdempotentHandler.builder().group(group).dataSource(ds)
        .policy(FailurePolicy.defaults().withMaxAttempts(3).withBackoff(backoff, backoff))
        .handler((c, m) -> {
          String id = m.header("converge-message-id");
          if (failing.test(id) && failed.add(id)) {
            throw new IllegalStateException("ledger briefly locked");
          }
          ran.add(id);
        }).build();
  }

  /** A small pool of {@code ds}'s connections (its schema), for a test's many set-up calls. */
  private static HikariDataSource pool(DataSource ds) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(ds);
    config.setMaximumPoolSize(2);
    return new HikariDataSource(config);
  }

  private static String string(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  private static IncomingMessage message(String id) {
    return message(id, "cust-1");
  }

  private static IncomingMessage message(String id, String key) {
    return message("charges", id, key);
  }

  private static IncomingMessage message(String topic, String id, String key) {
    return IncomingMessage.builder().topic(topic).header("converge-message-id", id).brokerKey(key)
        .payload("{}").build();
  }

  private static long count(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
