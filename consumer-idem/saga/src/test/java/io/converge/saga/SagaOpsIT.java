package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.IncomingMessage;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link SagaOps} on a real PostgreSQL with a real coordinator ({@link OrderSaga} through the outbox backend, messages
 * delivered by the test, time moved by hand): what the list and the timeline show, and that each action only moves
 * the saga to where the coordinator's own next poll does the work (a command sent again, a compensation through the
 * deadline path, a failed compensation tried again), audited and guarded by the saga's version.
 */
class SagaOpsIT {

  private static DataSource ds;

  private final MutableClock clock = new MutableClock();
  private final List<AutoCloseable> open = new ArrayList<>();
  private OrderSaga s;
  private Mailbox mail;
  private SagaOps ops;

  @BeforeAll
  static void schema() throws Exception {
    ds = ConvergePostgres.shared().newSchema("sagaops");
    OrderSaga.migrate(ds);
  }

  private void saga() throws Exception {
    TxnProducer producer = TxnProducer.builder().group("ops-" + UUID.randomUUID().toString().substring(0, 8))
        .dataSource(ds).backend(OutboxBackend.outbox()).clock(clock).build();
    open.add(producer);
    s = new OrderSaga(ds, producer, "", clock, b -> {
    });
    open.add(s.coordinator);
    mail = Mailbox.fromNow(ds);
    ops = SagaOps.of(ds, clock);
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
    // each test's sagas end with it: a later test's poll (its clock starts at the same instant) must not find them
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.executeUpdate("DELETE FROM converge_saga_ticket");
      st.executeUpdate("DELETE FROM converge_saga_event");
      st.executeUpdate("DELETE FROM converge_saga");
    }
  }

  /** Starts {@code id} refusing {@code debit} and failing the undo of {@code reserve}: COMPENSATION_FAILED. */
  private void failCompensation(String id) throws Exception {
    s.start(id, ",\"refuse\":\"debit\",\"failUndo\":\"reserve\"");
    s.pump(mail);
    for (int i = 0; i < 2; i++) {
      clock.advance(Duration.ofSeconds(1));
      s.coordinator.poll();
      s.pump(mail);
    }
    assertThat(s.state(id)).isEqualTo("COMPENSATION_FAILED");
  }

  private List<String> ids(List<SagaOps.Saga> sagas, String prefix) {
    return sagas.stream().map(SagaOps.Saga::id).filter(i -> i.startsWith(prefix)).toList();
  }

  @Test
  void theListShowsSagasInAnIntermediateStateAndThoseWithAnOpenTicket() throws Exception {
    saga();
    s.start("l-done", "");
    s.pump(mail);
    failCompensation("l-failed");
    s.start("l-running", "");
    mail.next(); // its command stays out
    clock.advance(Duration.ofMinutes(3));

    List<SagaOps.Saga> all = ops.list(SagaOps.Filter.all());
    assertThat(ids(all, "l-")).containsExactlyInAnyOrder("l-failed", "l-running");
    SagaOps.Saga running = all.stream().filter(r -> r.id().equals("l-running")).findFirst().orElseThrow();
    assertThat(running.definition()).isEqualTo("order");
    assertThat(running.state()).isEqualTo(SagaState.RUNNING);
    assertThat(running.stepName()).isEqualTo("reserve");
    assertThat(running.attempt()).isEqualTo(1);
    assertThat(running.age()).isEqualTo(Duration.ofMinutes(3));
    assertThat(running.nextAttemptAt()).isNotNull();
    assertThat(running.openTickets()).isZero();
    SagaOps.Saga failed = all.stream().filter(r -> r.id().equals("l-failed")).findFirst().orElseThrow();
    assertThat(failed.openTickets()).isOne();
    assertThat(failed.lastError()).contains("compensation of step 'reserve' failed 3 times");

    assertThat(ids(ops.list(SagaOps.Filter.all().withStates(Set.of(SagaState.COMPENSATION_FAILED))), "l-"))
        .containsExactly("l-failed");
    assertThat(ops.list(SagaOps.Filter.all().withDefinition("payment"))).isEmpty();
    assertThat(ids(ops.list(SagaOps.Filter.all().withOlderThan(Duration.ofMinutes(3))), "l-")).hasSize(2);
    assertThat(ids(ops.list(SagaOps.Filter.all().withOlderThan(Duration.ofMinutes(4))), "l-")).isEmpty();
    assertThat(ops.list(SagaOps.Filter.all().withLimit(1))).hasSize(1);
    assertThat(ops.count(SagaOps.Filter.all())).isEqualTo(all.size());
    assertThatThrownBy(() -> SagaOps.Filter.all().withStates(Set.of(SagaState.COMPLETED)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("saga.ops.filter.states must be")
        .hasMessageEndingWith("but was [COMPLETED]");
    assertThatThrownBy(() -> SagaOps.Filter.all().withLimit(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("saga.ops.filter.limit must be between 1 and 10000, but was 0");

    SagaOps.Detail shown = ops.show("l-failed").orElseThrow();
    assertThat(shown.saga().state()).isEqualTo(SagaState.COMPENSATION_FAILED);
    assertThat(shown.data()).contains("failUndo");
    assertThat(shown.events()).extracting(SagaOps.Event::kind).startsWith("STARTED", "SENT")
        .endsWith("COMPENSATION_FAILED", "TICKET");
    assertThat(shown.events()).extracting(SagaOps.Event::seq).isSorted();
    assertThat(shown.events().get(shown.events().size() - 1).attempt()).as("a ticket has no attempt").isNull();
    assertThat(shown.tickets()).singleElement().satisfies(t -> {
      assertThat(t.kind()).isEqualTo("COMPENSATION_FAILED");
      assertThat(t.step()).isEqualTo("reserve");
      assertThat(t.status()).isEqualTo("OPEN");
    });
    assertThat(ops.show("nope")).isEmpty();
  }

  @Test
  void retrySendsTheCommandOfAWaitingSagaAgainAndItCompletes() throws Exception {
    saga();
    s.start("r1", "");
    IncomingMessage command = mail.next().get(0);
    s.deliver(command);
    mail.next(); // the reply, lost; so are the re-sends' replies
    for (int i = 0; i < 2; i++) {
      clock.advance(OrderSaga.STEP_TIMEOUT);
      assertThat(s.coordinator.poll()).isOne();
      s.deliver(mail.next().get(0));
      mail.next();
    }
    clock.advance(OrderSaga.STEP_TIMEOUT);
    assertThat(s.coordinator.poll()).as("its sends are used: it waits for its deadline").isOne();
    assertThat(mail.next()).isEmpty();
    assertThat(s.coordinator.poll()).isZero();

    SagaOps.Saga after = ops.retry("r1", "alice", "inventory is back");
    assertThat(after.state()).isEqualTo(SagaState.RUNNING);
    assertThat(after.nextAttemptAt()).isEqualTo(clock.instant());
    assertThat(s.events("r1")).endsWith("OPERATOR_RETRY reserve 1");
    assertThat(s.one("SELECT payload FROM converge_saga_event WHERE saga_id = 'r1' AND kind = 'OPERATOR_RETRY'"))
        .isEqualTo("alice: inventory is back");

    assertThat(s.coordinator.poll()).as("due at once").isOne();
    List<IncomingMessage> again = mail.next();
    assertThat(again).singleElement().satisfies(m -> assertThat(m.header(SagaHeaders.COMMAND_ID))
        .as("the same command").isEqualTo(command.header(SagaHeaders.COMMAND_ID)));
    s.deliver(again.get(0));
    s.pump(mail);
    assertThat(s.state("r1")).isEqualTo("COMPLETED");
    assertThat(s.effects("r1")).as("the work ran once; the re-sent command got the stored reply")
        .containsOnlyOnce("reserve forward");
    assertThat(s.events("r1")).containsSubsequence("OPERATOR_RETRY reserve 1", "SENT reserve 1",
        "REPLIED reserve 1", "SENT debit 1", "COMPLETED");

    assertThatThrownBy(() -> ops.retry("r1", "alice", null)).isInstanceOfSatisfying(
        SagaOperationRefusedException.class, e -> assertThat(e.state()).isEqualTo(SagaState.COMPLETED))
        .hasMessage("saga r1 is COMPLETED: retry applies to RUNNING, COMPENSATING and COMPENSATION_FAILED sagas");
    assertThatThrownBy(() -> ops.retry("nope", "alice", null)).isInstanceOfSatisfying(
        SagaOperationRefusedException.class, e -> assertThat(e.state()).isNull()).hasMessage("no saga nope");
    assertThatThrownBy(() -> ops.retry("r1", " ", null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("saga.ops.operator must name who acts, but was  ");
  }

  @Test
  void compensateTakesARunningSagaThroughTheCoordinatorsDeadlinePath() throws Exception {
    saga();
    s.start("c1", "");
    s.deliver(mail.next().get(0)); // reserve
    s.deliver(mail.next().get(0)); // its reply: debit sent
    List<IncomingMessage> debit = mail.next();
    assertThat(debit).hasSize(1); // held: the debit command is in flight

    SagaOps.Saga marked = ops.compensate("c1", "bob", "customer cancelled");
    assertThat(marked.state()).as("the coordinator compensates it, not the command").isEqualTo(SagaState.RUNNING);
    assertThat(s.events("c1")).endsWith("OPERATOR_COMPENSATE debit 1");
    assertThat(s.coordinator.poll()).as("due now, no time passed").isOne();
    s.pump(mail);
    s.deliver(debit.get(0)); // the held command, refused by the barrier
    s.pump(mail);
    assertThat(s.state("c1")).isEqualTo("COMPENSATED");
    assertThat(s.effects("c1")).containsExactly("reserve forward", "reserve compensate");
    assertThat(s.events("c1")).containsSubsequence("OPERATOR_COMPENSATE debit 1", "DEADLINE debit 1",
        "COMPENSATING", "COMPENSATION_SENT debit 1", "COMPENSATED debit 1", "COMPENSATION_SENT reserve 1",
        "COMPENSATED reserve 1", "COMPENSATED");
    assertThat(s.one("SELECT payload FROM converge_saga_event WHERE saga_id = 'c1' AND kind = 'OPERATOR_COMPENSATE'"))
        .isEqualTo("bob: customer cancelled");

    assertThatThrownBy(() -> ops.compensate("c1", "bob", null)).isInstanceOf(SagaOperationRefusedException.class)
        .hasMessage("saga c1 is COMPENSATED: compensate applies to RUNNING sagas only");
    assertThatThrownBy(() -> ops.resolve("c1", "bob", null)).isInstanceOf(SagaOperationRefusedException.class)
        .hasMessage("saga c1 is COMPENSATED: it has no open ticket");
  }

  @Test
  void retryOfAFailedCompensationCompensatesAgainAndResolveClosesItsTicket() throws Exception {
    saga();
    failCompensation("f1");
    long version = s.count("SELECT version FROM converge_saga WHERE id = 'f1'");
    // a person fixed the participant: its undo no longer fails
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.executeUpdate("UPDATE converge_saga SET data = data - 'failUndo' WHERE id = 'f1'");
    }
    SagaOps.Saga after = ops.retry("f1", "carol", "inventory fixed");
    assertThat(after.state()).isEqualTo(SagaState.COMPENSATING);
    assertThat(after.stepName()).isEqualTo("reserve");
    assertThat(after.attempt()).as("a new attempt: a new command id").isEqualTo(4);
    assertThat(after.version()).isEqualTo(version + 1);
    assertThat(after.openTickets()).as("open until resolved").isOne();
    assertThat(s.one("SELECT failures || ' ' || awaiting FROM converge_saga WHERE id = 'f1'")).isEqualTo("0 false");

    assertThat(s.coordinator.poll()).isOne();
    s.pump(mail);
    assertThat(s.state("f1")).isEqualTo("COMPENSATED");
    assertThat(s.effects("f1")).containsExactly("reserve forward", "reserve compensate");
    assertThat(s.events("f1")).containsSubsequence("TICKET reserve", "OPERATOR_RETRY reserve 4",
        "COMPENSATION_SENT reserve 4", "COMPENSATED reserve 4", "COMPENSATED");

    List<SagaOps.Ticket> closed = ops.resolve("f1", "carol", "refund checked");
    assertThat(closed).singleElement().satisfies(t -> {
      assertThat(t.status()).isEqualTo("RESOLVED");
      assertThat(t.resolvedBy()).isEqualTo("carol");
      assertThat(t.resolution()).isEqualTo("refund checked");
      assertThat(t.resolvedAt()).isEqualTo(clock.instant());
    });
    assertThat(s.events("f1")).endsWith("OPERATOR_RESOLVED reserve");
    assertThat(s.one("SELECT payload FROM converge_saga_event WHERE saga_id = 'f1' AND kind = 'OPERATOR_RESOLVED'"))
        .isEqualTo("carol: refund checked (ticket " + closed.get(0).id() + ")");
    assertThatThrownBy(() -> ops.resolveTicket(closed.get(0).id(), "dave", null))
        .isInstanceOf(SagaOperationRefusedException.class)
        .hasMessageStartingWith("ticket " + closed.get(0).id() + " of saga f1 is RESOLVED (by carol at ");
    assertThatThrownBy(() -> ops.resolveTicket(-1, "dave", null)).hasMessage("no ticket -1");

    failCompensation("f2");
    assertThat(ops.resolveTicket(ops.show("f2").orElseThrow().tickets().get(0).id(), "dave", null).sagaId())
        .isEqualTo("f2");
    assertThat(ids(ops.list(SagaOps.Filter.all()), "f")).as("stopped, its ticket closed: not listed").isEmpty();
  }

  @Test
  void aTransitionCommittedMeanwhileWinsAndTheActionChangesNothing() throws Exception {
    saga();
    s.start("v1", "");
    mail.next();
    String row = "SELECT version || ' ' || awaiting || ' ' || next_attempt_at FROM converge_saga WHERE id = 'v1'";
    try (Connection coordinator = ds.getConnection(); Statement st = coordinator.createStatement()) {
      // a coordinator's transition in progress: the row locked, its compare-and-swap made, not committed yet
      coordinator.setAutoCommit(false);
      st.execute("SELECT * FROM converge_saga WHERE id = 'v1' FOR UPDATE");
      st.executeUpdate("UPDATE converge_saga SET version = version + 1 WHERE id = 'v1' AND version = 1");
      CompletableFuture<SagaOps.Saga> retry = CompletableFuture.supplyAsync(() -> ops.retry("v1", "erin", null));
      while (s.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
          + " AND query LIKE 'UPDATE converge_saga SET awaiting%'") == 0) {
        assertThat(retry).as("the action waits for the row").isNotDone();
        Thread.sleep(10);
      }
      String committed = s.one(row);
      coordinator.commit();
      assertThatThrownBy(() -> retry.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(StaleSagaException.class).hasMessageContaining("Saga v1 changed since it was read");
      assertThat(s.one(row)).as("only the transition's change").isEqualTo(committed.replaceFirst("^1 ", "2 "));
    }
    assertThat(s.events("v1")).doesNotContain("OPERATOR_RETRY reserve 1");
  }
}
