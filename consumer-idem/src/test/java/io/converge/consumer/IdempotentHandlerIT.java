package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.consumer.internal.HandlerScope;
import io.converge.core.Envelope;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The decorator on a real PostgreSQL, without a broker: dedup, concurrency, failure policy, DLQ, tickets. */
class IdempotentHandlerIT extends LedgerTestBase {

  private static final FailurePolicy FAST = Db.FAST;

  IdempotentHandlerIT(DataSource ds) {
    super(ds);
  }

  private static IncomingMessage message(String id) {
    return IncomingMessage.builder().topic("payments").header(Envelope.MESSAGE_ID, id).payload("{\"amount\":\"10.00\"}")
        .build();
  }

  private long effects(String id) {
    return Db.effects(ds, id);
  }

  private IdempotentHandler.Builder handler(String group, MessageHandler h) {
    return IdempotentHandler.builder().group(group).dataSource(ds).policy(FAST).handler(h);
  }

  /** The business write: counts the run, writes the message's ledger row, then does {@code then}. */
  private static MessageHandler ledger(AtomicInteger runs, MessageHandler then) {
    return (c, m) -> {
      runs.incrementAndGet();
      Db.insertLedger(c, m);
      then.handle(c, m);
    };
  }

  /** {@code copies} copies of message {@code id} handled at once, copy i by {@code instance(i)}: the outcomes. */
  private static Map<Outcome, Integer> race(int copies, IntFunction<IdempotentHandler> instance, String id)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(copies);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Outcome>> results = new ArrayList<>();
    for (int i = 0; i < copies; i++) {
      IdempotentHandler h = instance.apply(i);
      results.add(pool.submit(() -> {
        go.await();
        return h.handle(message(id));
      }));
    }
    go.countDown();
    Map<Outcome, Integer> outcomes = new ConcurrentHashMap<>();
    for (Future<Outcome> f : results) {
      outcomes.merge(f.get(30, TimeUnit.SECONDS), 1, Integer::sum);
    }
    pool.shutdown();
    return outcomes;
  }

  @Test
  void sequentialDuplicateIsAckedWithoutRunningTheHandler() {
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = handler("seq", ledger(runs, (c, m) -> {
    })).build();
    String id = UUID.randomUUID().toString();
    assertThat(h.handle(message(id))).isEqualTo(Outcome.PROCESSED);
    for (int i = 0; i < 4; i++) {
      assertThat(h.handle(message(id))).isEqualTo(Outcome.DUPLICATE);
    }
    assertThat(runs).hasValue(1);
    assertThat(effects(id)).isEqualTo(1);
    // another group is another dedup scope: it handles the same message once too
    assertThat(handler("seq-other", (c, m) -> Db.insertLedger(c, m)).build().handle(message(id)))
        .isEqualTo(Outcome.PROCESSED);
    // the same id in another tenant is another message
    IncomingMessage otherTenant = IncomingMessage.builder().topic("payments").header(Envelope.MESSAGE_ID, id)
        .header(Envelope.TENANT, "acme").build();
    assertThat(h.handle(otherTenant)).isEqualTo(Outcome.PROCESSED);
  }

  @Test
  void twentyConcurrentDeliveriesOnTwoInstancesHaveOneEffect() throws Exception {
    String id = UUID.randomUUID().toString();
    AtomicInteger runs = new AtomicInteger();
    MessageHandler slow = ledger(runs, (c, m) -> {
      Thread.sleep(200); // hold the uncommitted claim: the others must wait on the unique index
    });
    List<IdempotentHandler> instances = List.of(handler("conc", slow).build(), handler("conc", slow).build());
    Map<Outcome, Integer> outcomes = race(20, i -> instances.get(i % 2), id);
    assertThat(outcomes).containsOnly(Map.entry(Outcome.PROCESSED, 1), Map.entry(Outcome.DUPLICATE, 19));
    assertThat(runs).hasValue(1);
    assertThat(effects(id)).isEqualTo(1);
  }

  @Test
  void businessFailureRollsBackRecordsTheOutcomeAndIsNotRerun() {
    AtomicInteger runs = new AtomicInteger();
    AtomicInteger compensations = new AtomicInteger();
    IdempotentHandler h = handler("biz", ledger(runs, (c, m) -> {
      throw new BusinessException("ACCOUNT_NOT_FOUND", "no account 7");
    })).onBusinessFailure((c, m, e) -> compensations.incrementAndGet()).build();
    String id = UUID.randomUUID().toString();
    assertThat(h.handle(message(id))).isEqualTo(Outcome.BUSINESS_FAILURE);
    assertThat(h.handle(message(id))).isEqualTo(Outcome.DUPLICATE);
    assertThat(runs).hasValue(1);
    assertThat(compensations).hasValue(1);
    assertThat(effects(id)).isZero();
    assertThat(Db.string(ds, "SELECT outcome || ' ' || detail FROM converge_dedup WHERE message_id = '" + id + "'"))
        .isEqualTo("BUSINESS_FAILURE ACCOUNT_NOT_FOUND: no account 7");
  }

  /**
   * The handler's whole transaction rolls back on a business failure (issue 13.1), so a copy waiting on
   * the claim may take it and run the handler too; the outcome is still recorded once, the effect is none.
   */
  @Test
  void concurrentCopiesOfABusinessFailureRecordItOnce() throws Exception {
    String id = UUID.randomUUID().toString();
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = handler("biz-conc", ledger(runs, (c, m) -> {
      Thread.sleep(200); // the copies queue up on the claim meanwhile
      throw new BusinessException("RISK_REJECTED", "score 97");
    })).build();
    Map<Outcome, Integer> outcomes = race(10, i -> h, id);
    assertThat(outcomes).containsOnly(Map.entry(Outcome.BUSINESS_FAILURE, 1), Map.entry(Outcome.DUPLICATE, 9));
    assertThat(runs.get()).isBetween(1, 10);
    assertThat(effects(id)).isZero();
    assertThat(Db.count(ds, "SELECT count(*) FROM converge_dedup WHERE message_id = '" + id + "'")).isEqualTo(1);
  }

  @Test
  void technicalFailureIsRetriedWithBackoffThenHasOneEffect() {
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = handler("tech", (c, m) -> {
      Db.insertLedger(c, m);
      if (runs.incrementAndGet() < 3) {
        throw new SQLException("check constraint violated", "23514");
      }
    }).build();
    String id = UUID.randomUUID().toString();
    assertThat(h.handle(message(id))).isEqualTo(Outcome.PROCESSED);
    assertThat(runs).hasValue(3);
    assertThat(effects(id)).isEqualTo(1);
    assertThat(Db.count(ds, "SELECT count(*) FROM converge_consumer_attempt WHERE message_id = '" + id + "'")).isZero();
  }

  @Test
  void anOutageIsWaitedOutWithoutCountingAttempts() {
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = IdempotentHandler.builder().group("outage").dataSource(ds)
        .policy(FAST.withMaxAttempts(1).withMaxOutageBackoff(Duration.ofMillis(50)))
        .handler((c, m) -> {
          Db.insertLedger(c, m);
          if (runs.incrementAndGet() <= 5) {
            throw new SQLTransientConnectionException("HikariPool-1 - Connection is not available, request timed out");
          }
        }).build();
    String id = UUID.randomUUID().toString();
    assertThat(h.handle(message(id))).isEqualTo(Outcome.PROCESSED);
    assertThat(runs).hasValue(6); // maxAttempts 1 would have parked it after the first run
    assertThat(effects(id)).isEqualTo(1);
    assertThat(Db.count(ds, "SELECT count(*) FROM converge_dlq WHERE message_id = '" + id + "'")).isZero();
  }

  @Test
  void anInterruptEndsAnOutageWaitWithNothingRecorded() throws Exception {
    CountDownLatch failing = new CountDownLatch(1);
    IdempotentHandler h = IdempotentHandler.builder().group("outage-stop").dataSource(ds)
        .policy(FAST.withMaxOutageBackoff(Duration.ofMillis(50)))
        .handler((c, m) -> {
          failing.countDown();
          throw new SQLException("terminating connection due to administrator command", "57P01");
        }).build();
    String id = UUID.randomUUID().toString();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    Future<Outcome> result = pool.submit(() -> h.handle(message(id)));
    assertThat(failing.await(10, TimeUnit.SECONDS)).isTrue();
    pool.shutdownNow(); // interrupts the waiting thread, as closing a binding does
    assertThatThrownBy(() -> result.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(io.converge.core.ConvergeException.class)
        .hasMessageContaining("waited for an outage to end; it must be redelivered");
    assertThat(Db.count(ds, "SELECT count(*) FROM converge_dedup WHERE message_id = '" + id + "'")).isZero();
    assertThat(Db.count(ds, "SELECT count(*) FROM converge_consumer_attempt WHERE message_id = '" + id + "'")).isZero();
  }

  @Test
  void poisonMessageIsDeadLetteredWithATicketAfterNAttempts() {
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = handler("poison", ledger(runs, (c, m) -> {
      throw new IllegalStateException("cannot decode");
    })).build();
    String id = UUID.randomUUID().toString();
    assertThat(h.handle(message(id))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(runs).hasValue(3);
    assertThat(effects(id)).isZero();
    assertThat(Db.string(ds,
        "SELECT reason_code || ' ' || attempts || ' ' || status FROM converge_dlq WHERE message_id = '" + id + "'"))
        .isEqualTo("RETRIES_EXHAUSTED 3 PARKED");
    assertThat(Db.string(ds, "SELECT kind || ' ' || status FROM converge_ticket WHERE message_id = '" + id + "'"))
        .isEqualTo("RETRIES_EXHAUSTED OPEN");
    assertThat(ConsumerOps.of(ds).parked(100)).anySatisfy(d -> {
      assertThat(d.messageId()).isEqualTo(id);
      assertThat(d.reason()).contains("cannot decode");
      assertThat(d.age()).isGreaterThanOrEqualTo(Duration.ZERO);
    });
    // a redelivery finds the claim: not run a fourth time
    assertThat(h.handle(message(id))).isEqualTo(Outcome.DUPLICATE);
    assertThat(runs).hasValue(3);
  }

  @Test
  void moneyAnomalyStopsAtOnceWithATicketAndCanBeResumed() {
    AtomicInteger runs = new AtomicInteger();
    boolean[] fixed = {false};
    IdempotentHandler h = handler("money", (c, m) -> {
      runs.incrementAndGet();
      Db.insertLedger(c, m);
      if (!fixed[0]) {
        throw new MoneyAnomalyException("amount mismatch on charge 9", "100.00 EUR", "10.00 EUR");
      }
    }).build();
    String id = UUID.randomUUID().toString();
    assertThat(h.handle(message(id))).isEqualTo(Outcome.TICKETED);
    assertThat(runs).hasValue(1); // no retry
    assertThat(effects(id)).isZero();
    assertThat(h.handle(message(id))).isEqualTo(Outcome.DUPLICATE);
    assertThat(runs).hasValue(1);
    ConsumerOps ops = ConsumerOps.of(ds, Clock.systemUTC());
    ConsumerOps.Ticket ticket = ops.openTickets(100).stream().filter(t -> id.equals(t.messageId())).findFirst()
        .orElseThrow();
    assertThat(ticket.kind()).isEqualTo("MONEY_ANOMALY");
    assertThat(ticket.reason()).contains("expected 100.00 EUR, actual 10.00 EUR");

    fixed[0] = true; // a person fixed the cause
    assertThat(h.resume(ticket.dlqId())).isEqualTo(Outcome.PROCESSED);
    assertThat(effects(id)).isEqualTo(1);
    assertThat(Db.string(ds, "SELECT status FROM converge_dlq WHERE id = " + ticket.dlqId())).isEqualTo("RESUMED");
    assertThat(h.handle(message(id))).isEqualTo(Outcome.DUPLICATE);
    assertThat(ops.resolveTicket(ticket.id(), "ops@acme", "amount corrected upstream")).isTrue();
    assertThatThrownBy(() -> h.resume(ticket.dlqId())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("No parked message");
  }

  @Test
  void aParkedMessageIsNotResumedBeforeAnEarlierParkedMessageOfItsKey() {
    boolean[] fixed = {false};
    IdempotentHandler h = handler("two-parked", (c, m) -> {
      if (!fixed[0]) {
        throw new IllegalStateException("cannot decode");
      }
      Db.insertLedger(c, m);
    }).build();
    String key = "key-" + UUID.randomUUID();
    String first = UUID.randomUUID().toString();
    String second = UUID.randomUUID().toString();
    assertThat(h.handle(keyed(first, key))).isEqualTo(Outcome.DEAD_LETTERED);
    // the second message of the key parked too, not held (as the concurrent listener or a failed hold leaves it):
    // parked under another key, then given this one
    assertThat(h.handle(keyed(second, key + "-other"))).isEqualTo(Outcome.DEAD_LETTERED);
    Db.exec(ds, "UPDATE converge_dlq SET message_key = '" + key + "' WHERE message_id = '" + second + "'");
    long firstId = Db.count(ds, "SELECT id FROM converge_dlq WHERE message_id = '" + first + "'");
    long secondId = Db.count(ds, "SELECT id FROM converge_dlq WHERE message_id = '" + second + "'");
    fixed[0] = true;

    assertThatThrownBy(() -> h.resume(secondId)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("earlier parked message of its key, converge_dlq.id " + firstId);
    assertThat(effects(second)).isZero();
    assertThat(Db.string(ds, "SELECT status FROM converge_dlq WHERE id = " + secondId)).isEqualTo("PARKED");
    assertThat(h.resume(firstId)).isEqualTo(Outcome.PROCESSED);
    assertThat(h.resume(secondId)).isEqualTo(Outcome.PROCESSED);
    assertThat(Db.count(ds, "SELECT count(*) FROM ledger WHERE message_id IN ('" + first + "', '" + second + "')"))
        .isEqualTo(2);
  }

  @Test
  void theHoldCoversItsKeyOnlyInItsTenantAndTopicAndAHeldCopyIsADuplicate() {
    IdempotentHandler h = handler("hold-scope", (c, m) -> {
      if (m.header("poison") != null) {
        throw new IllegalStateException("cannot decode");
      }
      Db.insertLedger(c, m);
    }).build();
    String key = "key-" + UUID.randomUUID();
    IncomingMessage head = Db.poisonedHead(key);
    assertThat(h.handle(head)).isEqualTo(Outcome.DEAD_LETTERED);

    String behind = UUID.randomUUID().toString();
    assertThat(h.handle(keyed(behind, key))).isEqualTo(Outcome.HELD);
    assertThat(h.handle(keyed(behind, key))).as("a redelivery of a held message").isEqualTo(Outcome.DUPLICATE);
    assertThat(effects(behind)).isZero();
    long heldId = Db.count(ds, "SELECT id FROM converge_dlq WHERE message_id = '" + behind + "'");
    assertThatThrownBy(() -> h.resume(heldId)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("held behind a parked message of its key");

    String otherTenant = UUID.randomUUID().toString();
    assertThat(h.handle(IncomingMessage.builder().topic("payments").header(Envelope.MESSAGE_ID, otherTenant)
        .header(Envelope.TENANT, "tenant-b").brokerKey(key).payload("{}").build())).isEqualTo(Outcome.PROCESSED);
    String otherTopic = UUID.randomUUID().toString();
    assertThat(h.handle(IncomingMessage.builder().topic("refunds").header(Envelope.MESSAGE_ID, otherTopic)
        .brokerKey(key).payload("{}").build())).isEqualTo(Outcome.PROCESSED);
    String keyless = UUID.randomUUID().toString();
    assertThat(h.handle(message(keyless))).isEqualTo(Outcome.PROCESSED);
    assertThat(effects(otherTenant) + effects(otherTopic) + effects(keyless)).isEqualTo(3);
  }

  private static IncomingMessage keyed(String id, String key) {
    return IncomingMessage.builder().topic("payments").header(Envelope.MESSAGE_ID, id).brokerKey(key)
        .payload("{\"amount\":\"10.00\"}").build();
  }

  @Test
  void messageWithoutIdIsParkedWithAClearReasonAndNeverHandled() {
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = handler("noid", (c, m) -> runs.incrementAndGet()).build();
    IncomingMessage noId = IncomingMessage.builder().topic("payments").brokerMessageId("AC110001-noid")
        .brokerKey("order-1")
        .payload("{\"amount\":1}").build();
    assertThat(h.handle(noId)).isEqualTo(Outcome.DEAD_LETTERED);
    IncomingMessage badId = IncomingMessage.builder().topic("payments").brokerMessageId("AC110001-badid")
        .header(Envelope.MESSAGE_ID, "has spaces in it").build();
    assertThat(h.handle(badId)).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(runs).hasValue(0);
    assertThat(Db.string(ds,
        "SELECT reason_code || ' | ' || reason FROM converge_dlq WHERE broker_message_id = 'AC110001-noid'"))
        .startsWith("MISSING_MESSAGE_ID | ").contains("no header converge-message-id");
    assertThat(Db.string(ds, "SELECT reason FROM converge_dlq WHERE broker_message_id = 'AC110001-badid'"))
        .contains("printable ASCII");
    assertThat(Db.count(ds,
        "SELECT count(*) FROM converge_dlq WHERE broker_message_id LIKE 'AC110001-%' AND message_id IS NULL"))
        .isEqualTo(2);
  }

  @Test
  void configuredFallbackIdDeduplicatesForeignMessages() {
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler h = handler("fallback", (c, m) -> runs.incrementAndGet())
        .messageId(MessageIdResolver.envelope().orElse(MessageIdResolver.payloadField("eventId"))).build();
    String eventId = UUID.randomUUID().toString();
    IncomingMessage foreign = IncomingMessage.builder().topic("payments").payload("{\"eventId\":\"" + eventId + "\"}")
        .build();
    assertThat(h.handle(foreign)).isEqualTo(Outcome.PROCESSED);
    assertThat(h.handle(foreign)).isEqualTo(Outcome.DUPLICATE);
    assertThat(runs).hasValue(1);
  }

  @Test
  void theIdIsResolvedOncePerMessageAndTheHandlerSeesItInItsScope() {
    AtomicInteger resolutions = new AtomicInteger();
    MessageIdResolver counting = m -> {
      resolutions.incrementAndGet();
      return MessageIdResolver.envelope().resolve(m);
    };
    List<String> scopeIds = new ArrayList<>();
    IdempotentHandler h = handler("resolve-once", (c, m) -> scopeIds.add(HandlerScope.current().messageId()))
        .messageId(counting).build();
    String id = UUID.randomUUID().toString();
    assertThat(h.handle(message(id))).isEqualTo(Outcome.PROCESSED);
    assertThat(resolutions).as("the claim and the handler's scope share one resolution").hasValue(1);
    assertThat(scopeIds).containsExactly(id);
    assertThat(HandlerScope.current()).as("the scope is closed after the run").isNull();
  }

  @Test
  void purgeDeletesOnlyExpiredRowsInBatches() {
    Db.exec(ds, "INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, topic, processed_at) "
        + "SELECT 'default', 'purge', 'old-' || g, 'PROCESSED', 't', now() - interval '8 days' FROM generate_series(1, 25) g");
    Db.exec(ds, "INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, topic, processed_at) "
        + "VALUES ('default', 'purge', 'fresh', 'PROCESSED', 't', now() - interval '6 days')");
    DedupPurger purger = new DedupPurger(ds, DedupPurger.DEFAULT_RETENTION, 10, Clock.systemUTC());
    assertThat(purger.purgeExpired(2)).isEqualTo(20); // bounded: two batches of 10
    assertThat(purger.purgeExpired(100)).isEqualTo(5);
    assertThat(Db.count(ds, "SELECT count(*) FROM converge_dedup WHERE consumer_group = 'purge'")).isEqualTo(1);
  }
}
