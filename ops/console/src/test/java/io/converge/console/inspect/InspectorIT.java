package io.converge.console.inspect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.console.inspect.Inspector.Filter;
import io.converge.consumer.http.IdempotencyKeyPurger;
import io.converge.core.Migrations;
import io.converge.core.internal.DayPartitions;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The {@link Inspector} against the real tables of every module on the embedded PostgreSQL: each kind lists
 * its items oldest first with age, reason and details, filtered by tenant, topic, key and age; items under
 * the threshold are not stuck; a kind whose table is missing has no items. The state-transition table is
 * created here with the DDL {@code StateMachine}'s migration uses, when this schema does not have it.
 */
class InspectorIT {

  private static DataSource ds;
  private static DataSource bare;

  @BeforeAll
  static void schema() throws Exception {
    ConvergePostgres pg = ConvergePostgres.shared();
    ds = pg.newSchema("inspect");
    for (String module : List.of("producer", "consumer", "idempotency", "outbox", "pulsar", "saga", "tcc")) {
      Migrations.apply(ds, module);
    }
    bare = pg.newSchema("inspectbare");
    execute(ds, """
        CREATE TABLE IF NOT EXISTS converge_state_transition (id bigserial primary key, machine text not null,
          entity_id text not null, tenant text, from_state text, to_state text not null, version bigint not null,
          cause text, message_id text, at timestamptz not null default now(), final boolean not null)""",
        "INSERT INTO converge_txn_ticket (message_id, producer_group, topic, kind, reason, checks, created_at)"
            + " VALUES ('m-half', 'pay', 'payments', 'CHECK_BACK_PAST_RETENTION', 'deliver or discard by hand', 3,"
            + " now() - interval '8 days')",
        "INSERT INTO converge_pulsar_txn (txn_most, txn_least, producer_group, deadline, created_at) VALUES"
            + " (1, 10, 'pg', now(), now() - interval '10 minutes'), (1, 11, 'pg', now(), now() - interval '5 seconds')",
        "INSERT INTO converge_pulsar_txn (txn_most, txn_least, producer_group, deadline, created_at, attempts,"
            + " parked_at, reason) VALUES (2, 20, 'pg', now(), now() - interval '1 hour', 5, now() - interval '50 minutes',"
            + " 'TopicTerminatedException')",
        "INSERT INTO converge_pulsar_txn_message (message_id, txn_most, txn_least, topic, msg_key, properties, payload)"
            + " VALUES ('pm1', 1, 10, 'ledger', 'acct-1', '{}', '\\x00'), ('pm2', 1, 10, 'ledger', 'acct-1', '{}', '\\x00')",
        // a unit logged in one row (pulsar migration V4), next to those an earlier version logged above
        "INSERT INTO converge_pulsar_unit (txn_most, txn_least, producer_group, deadline, created_at, message_ids, topics,"
            + " msg_keys, properties, payloads) VALUES (3, 30, 'pg', now(), now() - interval '7 minutes',"
            + " '{pm3,pm4,pm5}', '{refunds,ledger,ledger}', '{acct-9,NULL,acct-2}', '{NULL,NULL,NULL}',"
            + " ARRAY['\\x00'::bytea, '\\x00', '\\x00'])",
        "INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key, header_names, header_values,"
            + " payload, created_at, attempts, last_error, parked_at) VALUES"
            + " ('o-poison', 'g', 'orders', 'k-poison', 'k-poison', '{converge-tenant}', '{t1}', '\\x00',"
            + "  now() - interval '3 hours', 5, 'message too large', now() - interval '2 hours'),"
            + " ('o-behind', 'g', 'orders', 'k-poison', 'k-poison', '{converge-tenant}', '{t1}', '\\x00',"
            + "  now() - interval '2 hours', 0, NULL, NULL),"
            + " ('o-other-tenant', 'g', 'orders', 'k-poison', 'k-poison', '{converge-tenant}', '{t2}', '\\x00',"
            + "  now() - interval '90 minutes', 0, NULL, NULL),"
            + " ('o-late', 'g', 'orders', 'k-late', 'k-late', '{converge-tenant}', '{t2}', '\\x00',"
            + "  now() - interval '4 minutes', 2, 'broker busy', NULL),"
            + " ('o-fresh', 'g', 'refunds', 'k-fresh', 'k-fresh', '{converge-tenant}', '{t1}', '\\x00', now(), 0, NULL, NULL)",
        "INSERT INTO converge_dlq (tenant, consumer_group, topic, message_id, message_key, reason_code, reason,"
            + " attempts, headers, payload, status, created_at) VALUES"
            + " ('t1', 'billing', 'charges', 'd-old', 'c-1', 'RETRIES_EXHAUSTED', 'deadlock', 8,"
            + "  'converge-message-id=d-old' || chr(10) || 'converge-schema=order-created%2F2.1' || chr(10), '\\x00', 'PARKED',"
            + "  now() - interval '2 days'),"
            + " ('t2', 'billing', 'charges', 'd-new', 'c-2', 'MONEY_ANOMALY', 'debit > total', 1, '', '\\x00', 'PARKED',"
            + "  now() - interval '3 minutes'),"
            + " ('t1', 'billing', 'charges', 'd-done', 'c-3', 'RETRIES_EXHAUSTED', 'x', 8, '', '\\x00', 'DISCARDED',"
            + "  now() - interval '3 days')",
        "INSERT INTO converge_ticket (tenant, consumer_group, topic, message_id, kind, reason, status, created_at)"
            + " VALUES ('t1', 'billing', 'charges', 'd-new', 'MONEY_ANOMALY', 'debit exceeds the total', 'OPEN',"
            + " now() - interval '10 minutes'),"
            + " ('t1', 'billing', 'charges', 'd-x', 'MONEY_ANOMALY', 'closed', 'RESOLVED', now() - interval '1 day')",
        "INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status, lease_owner,"
            + " leased_until, expected_ms, claimed_at, expires_at, day) VALUES"
            + " ('t1', 'idem-running', repeat('a', 64), 'POST', '/payments', 'PROCESSING', gen_random_uuid(),"
            + "  now() - interval '1 minute', 1000, now() - interval '6 minutes', now() + interval '1 day',"
            + "  DATE '1970-01-01'),"
            + " ('t1', 'idem-done', repeat('b', 64), 'POST', '/payments', 'COMPLETED', gen_random_uuid(),"
            + "  now(), 1000, now() - interval '1 hour', now() + interval '1 day', DATE '1970-01-01'),"
            + " ('t1', 'idem-expired', repeat('c', 64), 'POST', '/payments', 'COMPLETED', gen_random_uuid(),"
            + "  now(), 1000, now() - interval '2 days', now() - interval '1 day', DATE '1970-01-01')",
        "INSERT INTO converge_state_transition (machine, entity_id, tenant, from_state, to_state, version, cause,"
            + " message_id, at, final) VALUES"
            + " ('payment', 'p-1', 't1', NULL, 'CREATED', 1, 'api', NULL, now() - interval '2 hours', false),"
            + " ('payment', 'p-1', 't1', 'CREATED', 'AUTHORIZING', 2, 'order-created', 'm-9', now() - interval '1 hour',"
            + "  false),"
            + " ('payment', 'p-2', 't1', NULL, 'CREATED', 1, 'api', NULL, now() - interval '2 hours', false),"
            + " ('payment', 'p-2', 't1', 'CREATED', 'SETTLED', 2, 'settled', NULL, now() - interval '90 minutes', true),"
            + " ('payment', 'p-3', 't1', NULL, 'CREATED', 1, 'api', NULL, now() - interval '10 seconds', false)",
        "INSERT INTO converge_saga (id, tenant, definition, state, step, step_name, attempt, awaiting, data,"
            + " next_attempt_at, deadline, created_at, updated_at, last_error) VALUES"
            + " ('saga-running', 't1', 'order', 'RUNNING', 1, 'debit', 2, true, '{}', now() - interval '20 minutes',"
            + "  now() + interval '1 hour', now() - interval '30 minutes', now(), 'TECHNICAL: ledger busy'),"
            + " ('saga-long', 't1', 'order', 'RUNNING', 2, 'ship', 1, true, '{}', now() + interval '1 hour',"
            + "  now() + interval '2 days', now() - interval '3 hours', now(), NULL),"
            + " ('saga-aside', 't1', 'order-v9', 'RUNNING', 0, NULL, 0, false, '{}', now() + interval '20 seconds',"
            + "  now() + interval '1 day', now() - interval '11 minutes', now(), 'unknown definition'),"
            + " ('saga-fresh', 't1', 'order', 'COMPENSATING', 0, 'reserve', 1, false, '{}', now(), now(),"
            + "  now() - interval '30 seconds', now(), NULL),"
            + " ('saga-failed', 't2', 'order', 'COMPENSATION_FAILED', 0, 'reserve', 3, false, '{}', NULL, now(),"
            + "  now() - interval '3 hours', now(), NULL),"
            + " ('saga-resolved', 't2', 'order', 'STOPPED', 1, 'debit', 1, false, '{}', NULL, now(),"
            + "  now() - interval '3 hours', now(), NULL),"
            + " ('saga-done', 't1', 'order', 'COMPLETED', 3, NULL, 1, false, '{}', NULL, now(),"
            + "  now() - interval '3 hours', now(), NULL)",
        "INSERT INTO converge_saga_ticket (saga_id, tenant, step, kind, reason, status, created_at) VALUES"
            + " ('saga-failed', 't2', 'reserve', 'COMPENSATION_FAILED', 'inventory refused 3 times', 'OPEN',"
            + "  now() - interval '2 hours'),"
            + " ('saga-resolved', 't2', 'debit', 'ANOMALY', 'debit exceeds the total', 'RESOLVED',"
            + "  now() - interval '2 hours')",
        "INSERT INTO converge_saga_event (saga_id, step, attempt, kind, payload, at) VALUES"
            + " ('saga-aside', NULL, NULL, 'STARTED', NULL, now() - interval '11 minutes'),"
            + " ('saga-aside', NULL, 0, 'SET_ASIDE', 'unknown definition', now() - interval '10 minutes')");
  }

  private static void execute(DataSource on, String... sql) throws Exception {
    try (Connection c = on.getConnection(); Statement s = c.createStatement()) {
      for (String statement : sql) {
        s.execute(statement);
      }
    }
  }

  private static List<String> ids(StuckKind kind, Filter filter) {
    return Inspector.of(ds).list(kind, filter).stream().map(StuckItem::id).toList();
  }

  @Test
  void everyKindListsItsStuckItemsOldestFirstWithAgeAndReason() {
    Inspector inspector = Inspector.of(ds);
    StuckItem half = inspector.list(StuckKind.ROCKETMQ_UNIT, Filter.stuck()).get(0);
    assertThat(half.id()).isEqualTo("m-half");
    assertThat(half.age()).isGreaterThan(Duration.ofDays(7));
    assertThat(half.reason()).contains("CHECK_BACK_PAST_RETENTION").contains("deliver or discard by hand");
    assertThat(half.details()).containsEntry("checks", "3").containsEntry("group", "pay");

    StuckItem open = inspector.list(StuckKind.PULSAR_TXN, Filter.stuck()).get(0);
    assertThat(ids(StuckKind.PULSAR_TXN, Filter.stuck())).as("the 5-second one is under 5 minutes")
        .containsExactly("(1,10)", "(3,30)");
    assertThat(open.topic()).isEqualTo("ledger");
    assertThat(open.key()).isEqualTo("acct-1");
    assertThat(open.details()).containsEntry("messages", "2");
    StuckItem unit = inspector.list(StuckKind.PULSAR_TXN, Filter.stuck()).get(1);
    assertThat(unit.topic()).isEqualTo("ledger");
    assertThat(unit.key()).isEqualTo("acct-2");
    assertThat(unit.details()).containsEntry("messages", "3").containsEntry("group", "pg");
    assertThat(ids(StuckKind.PULSAR_TXN, Filter.all())).containsExactly("(1,10)", "(3,30)", "(1,11)");
    StuckItem parked = inspector.list(StuckKind.PULSAR_RECOVERY, Filter.stuck()).get(0);
    assertThat(parked.id()).isEqualTo("(2,20)");
    assertThat(parked.reason()).contains("parked after 5 attempt(s): TopicTerminatedException");
    assertThat(parked.age()).isBetween(Duration.ofMinutes(49), Duration.ofMinutes(51));

    assertThat(ids(StuckKind.OUTBOX_PARKED, Filter.stuck())).containsExactly("o-poison");
    StuckItem poison = inspector.list(StuckKind.OUTBOX_PARKED, Filter.stuck()).get(0);
    assertThat(poison.key()).isEqualTo("k-poison");
    assertThat(poison.tenant()).isEqualTo("t1");
    assertThat(poison.details()).containsEntry("rows waiting behind it", "1");
    assertThat(ids(StuckKind.OUTBOX_LAG, Filter.stuck()))
        .as("not the row behind the parked key, not the fresh one; the key's row of another tenant is not held")
        .containsExactly("o-other-tenant", "o-late");
    assertThat(inspector.list(StuckKind.OUTBOX_LAG, Filter.stuck()).get(1).reason())
        .isEqualTo("send failed 2 time(s), retrying: broker busy");

    assertThat(ids(StuckKind.CONSUMER_DLQ, Filter.stuck())).containsExactly(dlqId("d-old"), dlqId("d-new"));
    assertThat(inspector.list(StuckKind.CONSUMER_DLQ, Filter.stuck()).get(0).details())
        .containsEntry("attempts", "8").containsEntry("message id", "d-old")
        .as("the schema's type and version (issue 34)").containsEntry("schema", "order-created/2.1");
    assertThat(inspector.list(StuckKind.CONSUMER_DLQ, Filter.stuck()).get(1).details()).doesNotContainKey("schema");
    assertThat(inspector.list(StuckKind.TICKET, Filter.stuck())).singleElement()
        .satisfies(t -> assertThat(t.reason()).isEqualTo("MONEY_ANOMALY: debit exceeds the total"));

    assertThat(inspector.list(StuckKind.IDEMPOTENCY_KEY, Filter.stuck())).extracting(StuckItem::id)
        .containsExactly("t1/idem-expired", "t1/idem-running");
    assertThat(inspector.list(StuckKind.IDEMPOTENCY_KEY, Filter.stuck()).get(1).reason())
        .startsWith("in progress, its lease ran out");

    assertThat(inspector.list(StuckKind.STATE, Filter.stuck())).as("the latest transition of each entity, not final")
        .singleElement().satisfies(s -> {
          assertThat(s.id()).isEqualTo("payment/p-1");
          assertThat(s.reason()).isEqualTo("in intermediate state AUTHORIZING (from CREATED), caused by order-created");
          assertThat(s.age()).isBetween(Duration.ofMinutes(59), Duration.ofMinutes(61));
        });

    assertThat(ids(StuckKind.SAGA, Filter.stuck()))
        .as("a ticket aged from the ticket, a running saga from when it fell due, a set-aside one from when it was"
            + " first set aside; not the long healthy one, the fresh, resolved or completed ones")
        .containsExactly("saga-failed", "saga-running", "saga-aside");
    assertThat(inspector.list(StuckKind.SAGA, Filter.stuck()).get(2).age())
        .isBetween(Duration.ofMinutes(9), Duration.ofMinutes(11));
    StuckItem failed = inspector.list(StuckKind.SAGA, Filter.stuck()).get(0);
    assertThat(failed.reason())
        .isEqualTo("COMPENSATION_FAILED, open ticket: COMPENSATION_FAILED inventory refused 3 times");
    assertThat(failed.age()).isBetween(Duration.ofMinutes(119), Duration.ofMinutes(121));
    assertThat(failed.tenant()).isEqualTo("t2");
    StuckItem running = inspector.list(StuckKind.SAGA, Filter.stuck()).get(1);
    assertThat(running.reason())
        .isEqualTo("running at step debit, waiting for its reply, last error: TECHNICAL: ledger busy");
    assertThat(running.details()).containsEntry("definition", "order").containsEntry("attempt", "2");
    assertThat(ids(StuckKind.SAGA, Filter.all())).as("a saga not due yet is not waiting on anybody: not listed")
        .contains("saga-fresh").doesNotContain("saga-long", "saga-resolved", "saga-done");
  }

  /**
   * A Try that the participant's barrier refused as hanging (its Cancel came first) is listed, with its branch and
   * refusals, and the global transaction's timeline shows the fenced Try, the Cancel and the refusal.
   */
  @Test
  void aTryTheBarrierRefusedAsHangingIsListedAndInTheTimeline() throws Exception {
    io.converge.saga.tcc.TccBarrier barrier = io.converge.saga.tcc.TccBarrier.builder().build();
    io.converge.saga.tcc.TccCall cancel = new io.converge.saga.tcc.TccCall("t1", "g-late", "debit",
        io.converge.saga.tcc.TccOperation.CANCEL);
    try (java.sql.Connection c = ds.getConnection()) {
      assertThat(barrier.run(c, cancel, x -> new byte[0]).outcome())
          .isEqualTo(io.converge.saga.tcc.TccOutcome.EMPTY_ROLLBACK);
      assertThat(barrier.run(c, cancel.with(io.converge.saga.tcc.TccOperation.TRY), x -> {
        throw new AssertionError("a hanging Try's body never runs");
      }).outcome()).isEqualTo(io.converge.saga.tcc.TccOutcome.HANGING_REFUSED);
    }
    assertThat(Inspector.of(ds).list(StuckKind.TCC_HANGING, Filter.all())).singleElement().satisfies(item -> {
      assertThat(item.id()).isEqualTo("t1/g-late/debit");
      assertThat(item.key()).isEqualTo("g-late");
      assertThat(item.reason()).isEqualTo(
          "Try of branch debit refused 1 time(s) as hanging: its Cancel came first (an empty rollback)");
      assertThat(item.details()).containsEntry("refusals", "1").containsEntry("branch", "debit");
    });
    assertThat(io.converge.console.trace.Timeline.of(ds).trace("g-late"))
        .extracting(io.converge.console.trace.TimelineEvent::what)
        .contains("TCC try of branch debit: fenced by its Cancel (the Try never ran)",
            "TCC cancel of branch debit: EMPTY_ROLLBACK", "TCC try of branch debit refused as hanging (1 time(s))");
  }

  private static String dlqId(String messageId) {
    return Inspector.of(ds).list(StuckKind.CONSUMER_DLQ, Filter.all()).stream()
        .filter(i -> messageId.equals(i.details().get("message id"))).findFirst().orElseThrow().id();
  }

  @Test
  void filtersByTenantTopicKeyAndAge() {
    assertThat(ids(StuckKind.CONSUMER_DLQ, Filter.all().tenant("t2"))).containsExactly(dlqId("d-new"));
    assertThat(ids(StuckKind.CONSUMER_DLQ, Filter.all().key("c-1"))).containsExactly(dlqId("d-old"));
    assertThat(ids(StuckKind.CONSUMER_DLQ, Filter.all().minAge(Duration.ofDays(1)))).containsExactly(dlqId("d-old"));
    assertThat(ids(StuckKind.CONSUMER_DLQ, Filter.all().limit(1))).containsExactly(dlqId("d-old"));
    assertThat(ids(StuckKind.OUTBOX_LAG, Filter.all().topic("refunds"))).containsExactly("o-fresh");
    assertThat(ids(StuckKind.OUTBOX_LAG, Filter.all().tenant("t1"))).containsExactly("o-fresh");
    assertThat(ids(StuckKind.ROCKETMQ_UNIT, Filter.all().tenant("t1"))).as("no tenant: a tenant filter excludes it")
        .isEmpty();
    assertThat(ids(StuckKind.STATE, Filter.all())).containsExactly("payment/p-1", "payment/p-3");
  }

  @Test
  void countsWhatIsPastItsThreshold() {
    Inspector defaults = Inspector.of(ds);
    assertThat(defaults.count(StuckKind.OUTBOX_LAG)).isEqualTo(2);
    assertThat(defaults.count(StuckKind.CONSUMER_DLQ)).isEqualTo(2);
    Inspector strict = Inspector.of(ds, StuckThresholds.defaults().with(StuckKind.CONSUMER_DLQ, Duration.ofHours(1))
        .with(StuckKind.OUTBOX_LAG, Duration.ZERO));
    assertThat(strict.count(StuckKind.CONSUMER_DLQ)).isEqualTo(1);
    assertThat(strict.count(StuckKind.OUTBOX_LAG)).isEqualTo(3);
    Inspector.Summary dlq = strict.summary(StuckKind.CONSUMER_DLQ);
    assertThat(dlq.total()).isEqualTo(2);
    assertThat(dlq.oldest()).isGreaterThan(Duration.ofHours(47));
    assertThat(strict.list(StuckKind.CONSUMER_DLQ, Filter.stuck())).hasSize(1);
    assertThatThrownBy(() -> StuckThresholds.defaults().with(StuckKind.STATE, Duration.ofSeconds(-1)))
        .hasMessageContaining("console.thresholds.state").hasMessageContaining("-1");
  }

  /**
   * An expired key of a day partition (idempotency V5) goes with its partition, dropped once every key of it has
   * expired and its day is over: until then it is not an item (the doctor would warn all day long), from then on it is.
   */
  @Test
  void anExpiredKeyOfADayPartitionIsAnItemOnlyOnceItsPartitionCouldBeDropped() throws Exception {
    DataSource idem = ConvergePostgres.shared().newSchema("inspectidem");
    Migrations.apply(idem, "idempotency");
    DayPartitions partitions = IdempotencyKeyPurger.partitions(idem);
    LocalDate today = partitions.databaseDay();
    partitions.createAhead(today.minusDays(3), 2);
    String insert = "INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status,"
        + " lease_owner, leased_until, expected_ms, claimed_at, expires_at, day) VALUES ('t1', '%s', repeat('a', 64),"
        + " 'POST', '/payments', 'COMPLETED', gen_random_uuid(), now() - interval '3 days', 1000,"
        + " now() - interval '3 days', now() + interval '%s', DATE '%s')";
    execute(idem, insert.formatted("k-droppable", "-2 days", today.minusDays(3)),
        insert.formatted("k-waiting", "-1 day", today.minusDays(2)),
        insert.formatted("k-live", "1 hour", today.minusDays(2)));

    Inspector inspector = Inspector.of(idem);
    assertThat(inspector.list(StuckKind.IDEMPOTENCY_KEY, Filter.all())).singleElement().satisfies(k -> {
      assertThat(k.id()).isEqualTo("t1/k-droppable");
      assertThat(k.reason()).isEqualTo("expired (its TTL passed), its day partition " + today.minusDays(3)
          + " not yet dropped");
    });
    assertThat(inspector.summary(StuckKind.IDEMPOTENCY_KEY).total()).isOne();
  }

  @Test
  void aKindWhoseTableIsMissingHasNoItems() {
    Inspector inspector = Inspector.of(bare);
    for (StuckKind kind : StuckKind.values()) {
      assertThat(inspector.list(kind, Filter.all())).as(kind.name()).isEmpty();
      assertThat(inspector.summary(kind).total()).as(kind.name()).isZero();
    }
  }
}
