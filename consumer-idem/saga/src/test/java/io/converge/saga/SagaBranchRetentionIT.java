package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.core.Envelope;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The participants' barrier rows ({@code converge_saga_branch}) and their retention, on the embedded PostgreSQL with
 * the real coordinator and participants (outbox backend, messages delivered by hand): the purge deletes the rows of
 * steps last written longer than the retention ago (a finished step's, an old forward-only one's) and nothing younger
 * (a step whose compensation row is young keeps its old forward row); two purgers at once delete each row once; a
 * compensation re-sent after its step's rows were purged runs nothing. The coordinator sends no command of a saga
 * older than the participants' retention less its margin (the saga ends with a RETENTION ticket) and refuses an
 * operator's retry or compensate of it (typed), while a younger saga's compensation is sent; a retry window that
 * does not fit in the retention with a deadline is refused at build.
 */
class SagaBranchRetentionIT {

  private static final SagaBranchRetention THIRTY_DAYS = new SagaBranchRetention(Duration.ofDays(30));

  @Test
  void thePurgeDeletesStepsPastTheRetentionAndNothingYoungerAndAPurgedCompensationRunsNothing() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("saga_branch_purge");
    OrderSaga.migrate(ds);
    try (TxnProducer producer = TxnProducer.builder().group("branch-purge").dataSource(ds)
        .backend(OutboxBackend.outbox()).build()) {
      OrderSaga saga = new OrderSaga(ds, producer, "", null, b -> {
      });
      Mailbox mail = new Mailbox(ds);
      saga.start("done", ""); // forward rows only: a completed saga, the common case
      saga.start("undone", ",\"refuse\":\"debit\""); // reserve: forward + compensation; debit: refused
      saga.start("mixed", ",\"refuse\":\"debit\""); // its compensation row stays young
      saga.start("fresh", "");
      List<IncomingMessage> sent = new ArrayList<>();
      for (List<IncomingMessage> batch = mail.next(); !batch.isEmpty(); batch = mail.next()) {
        sent.addAll(batch);
        batch.forEach(saga::deliver);
      }
      saga.coordinator.close();
      assertThat(saga.state("done")).isEqualTo("COMPLETED");
      assertThat(saga.state("undone")).isEqualTo("COMPENSATED");
      assertThat(rows(saga, "undone")).containsExactly("debit forward BUSINESS_FAILURE", "reserve compensate SUCCESS",
          "reserve forward SUCCESS");
      sql(ds, "UPDATE converge_saga_branch SET created_at = now() - interval '31 days'"
          + " WHERE saga_id IN ('done', 'undone') OR (saga_id = 'mixed' AND direction = 'forward')");
      sql(ds, "UPDATE converge_saga_branch SET created_at = now() - interval '29 days' WHERE saga_id = 'fresh'"
          + " AND step = 'ship'");
      long old = saga.count("SELECT count(*) FROM converge_saga_branch WHERE saga_id IN ('done', 'undone')"
          + " OR (saga_id = 'mixed' AND step = 'debit')");
      List<String> kept = all(saga);

      SagaBranchPurger purger = new SagaBranchPurger(ds, THIRTY_DAYS, 1); // one row a batch: the batches loop
      assertThat(purger.countExpired()).isEqualTo(old);
      assertThat(purger.purgeExpired(1000)).isEqualTo(old);
      assertThat(all(saga)).as("the finished steps' and the old forward-only steps' rows went, nothing younger")
          .containsExactlyElementsOf(kept.stream().filter(r -> !r.startsWith("done ") && !r.startsWith("undone ")
              && !r.startsWith("mixed debit ")).toList());
      assertThat(rows(saga, "mixed")).as("a step whose compensation row is young keeps its old forward row")
          .containsExactly("reserve compensate SUCCESS", "reserve forward SUCCESS");
      assertThat(rows(saga, "fresh")).hasSize(3);
      assertThat(purger.purgeExpired(1000)).as("nothing left to purge").isZero();

      // the reserve compensation of "undone" re-sent (a new message, the same command) after its rows were purged
      IncomingMessage undo = sent.stream().filter(m -> "undone".equals(m.header(SagaHeaders.SAGA_ID))
          && m.topic().equals("inventory-comp")).findFirst().orElseThrow();
      IncomingMessage again = IncomingMessage.builder().topic(undo.topic()).headers(undo.headers())
          .header(Envelope.MESSAGE_ID, "resent-" + undo.envelopeMessageId()).payload(undo.payload()).build();
      assertThat(saga.deliver(again)).isEqualTo(Outcome.PROCESSED);
      assertThat(saga.effects("undone")).as("the undo ran once, before the purge; the re-sent one ran nothing")
          .containsOnlyOnce("reserve compensate");
      assertThat(rows(saga, "undone")).containsExactly("reserve compensate EMPTY", "reserve forward PREVENTED");
      assertThat(saga.count("SELECT count(*) FROM converge_saga_branch WHERE created_at > now() - interval '1 minute'"
          + " AND saga_id = 'undone'")).as("dated by the database's clock").isEqualTo(2);

      // two instances purging at once: every old row deleted once, by one of them; steps with a forward and a
      // compensation row (each purger taking one row of a step, then deleting its sibling, deadlocked)
      sql(ds, "INSERT INTO converge_saga_branch (participant, saga_id, step, direction, outcome, reply, created_at)"
          + " SELECT 'bulk', 's' || i, 'reserve', d, 'SUCCESS', '', now() - interval '40 days' - i * interval '1 s'"
          + " FROM generate_series(1, 600) i, (VALUES ('forward'), ('compensate')) v(d)");
      SagaBranchPurger first = new SagaBranchPurger(ds, THIRTY_DAYS, 50);
      SagaBranchPurger second = new SagaBranchPurger(ds, THIRTY_DAYS, 50);
      CompletableFuture<Long> a = CompletableFuture.supplyAsync(() -> first.purgeExpired(1000));
      long b = second.purgeExpired(1000);
      assertThat(a.get() + b).isEqualTo(1200);
      assertThat(saga.count("SELECT count(*) FROM converge_saga_branch WHERE participant = 'bulk'")).isZero();
    }
  }

  @Test
  void theCoordinatorSendsNothingForASagaPastTheParticipantsRetentionAndRefusesTheOperator() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("saga_branch_horizon");
    OrderSaga.migrate(ds);
    MutableClock clock = new MutableClock();
    Duration retention = SagaBranchRetention.MIN_RETENTION; // 7 days: no command of a saga 6 days old
    try (TxnProducer producer = TxnProducer.builder().group("branch-horizon").dataSource(ds)
        .backend(OutboxBackend.outbox()).clock(clock).build()) {
      OrderSaga saga = new OrderSaga(ds, producer, "", clock, b -> b.participantRetention(retention));
      Mailbox mail = new Mailbox(ds);
      saga.start("old", ""); // its reserve command sent, never answered
      clock.advance(Duration.ofDays(6));
      saga.start("young", "");
      clock.advance(Duration.ofMinutes(2)); // both past their deadline
      for (List<IncomingMessage> batch = mail.next(); !batch.isEmpty(); batch = mail.next()) {
        batch.stream().filter(m -> !m.topic().equals("inventory-cmd")).forEach(saga::deliver);
      }

      // the ops instance keeps the default 30 days: the horizon stored with each saga at its start (the coordinator's
      // 7 days) decides, exactly as the coordinator does
      SagaOps ops = SagaOps.of(ds, clock);
      assertThatThrownBy(() -> ops.compensate("old", "alice", "customer cancelled"))
          .isInstanceOfSatisfying(SagaTooOldException.class, e -> {
            assertThat(e.sagaId()).isEqualTo("old");
            assertThat(e.state()).isEqualTo(SagaState.RUNNING);
            assertThat(e.horizon()).isEqualTo(Duration.ofDays(6));
          }).hasMessageContaining("past the PT144H in which its participants still keep its steps' rows");
      assertThatThrownBy(() -> ops.retry("old", "alice", null)).isInstanceOf(SagaTooOldException.class);
      assertThat(saga.events("old")).as("nothing changed").noneMatch(e -> e.startsWith("OPERATOR"));
      assertThat(ops.compensate("young", "alice", "customer cancelled").state()).isEqualTo(SagaState.RUNNING);

      for (int i = 0; i < 10 && saga.coordinator.poll() > 0; i++) {
        // drives both: their deadline passed
      }
      assertThat(saga.state("young")).isEqualTo("COMPENSATING");
      assertThat(saga.events("young")).contains("COMPENSATION_SENT reserve 1");
      assertThat(saga.state("old")).isEqualTo("COMPENSATION_FAILED");
      assertThat(saga.events("old")).contains("RETENTION_EXCEEDED reserve 1", "TICKET reserve")
          .noneMatch(e -> e.startsWith("COMPENSATION_SENT"));
      assertThat(saga.list("SELECT kind || ' ' || status FROM converge_saga_ticket WHERE saga_id = 'old'"))
          .containsExactly("RETENTION OPEN");
      assertThat(saga.one("SELECT reason FROM converge_saga_ticket WHERE saga_id = 'old'"))
          .startsWith("saga is PT144H2M old, past the PT144H in which participant 'inventory' still keeps the rows of"
              + " step 'reserve'")
          .contains("compensation could find its forward row purged and undo nothing");
      assertThat(mail.next()).as("one command: the young saga's compensation")
          .extracting(m -> m.header(SagaHeaders.SAGA_ID) + " " + m.topic()).containsExactly("young inventory-comp");
      assertThatThrownBy(() -> ops.retry("old", "bob", "try again")).isInstanceOf(SagaTooOldException.class)
          .hasMessageContaining("saga old is PT144H2M old");
      // a saga started before the guard was stored (migration saga/V5): judged by the ops instance's own retention
      sql(ds, "UPDATE converge_saga SET send_until = NULL, guarded_steps = NULL WHERE id = 'old'");
      assertThatThrownBy(() -> SagaOps.of(ds, clock, retention).retry("old", "bob", null))
          .isInstanceOfSatisfying(SagaTooOldException.class,
              e -> assertThat(e.horizon()).isEqualTo(Duration.ofDays(6)));
      assertThat(ops.retry("old", "bob", "its own 30 days").state()).as("the default 30 d accepts it")
          .isEqualTo(SagaState.COMPENSATING);
      saga.coordinator.close();

      assertThatThrownBy(() -> SagaCoordinator.builder().producer(producer).definitions(saga.definition)
          .replyTopic(OrderSaga.REPLIES).participantRetention(retention).retryWindow(Duration.ofDays(6)).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("saga.participantRetention must be at least the deadline of saga 'order' + the"
              + " retry window + the send margin (PT1M + PT144H + PT24H = PT168H1M)")
          .hasMessageEndingWith("but was PT168H");
      assertThatThrownBy(() -> SagaCoordinator.builder().producer(producer).definitions(saga.definition)
          .replyTopic(OrderSaga.REPLIES).participantRetention(Duration.ofDays(6)).build())
          .hasMessageStartingWith("converge.saga.branch-retention must be at least PT168H");
    }
  }

  private static List<String> rows(OrderSaga saga, String id) throws Exception {
    return saga.list("SELECT step || ' ' || direction || ' ' || outcome FROM converge_saga_branch WHERE saga_id = '"
        + id + "' ORDER BY step, direction");
  }

  private static List<String> all(OrderSaga saga) throws Exception {
    return saga.list("SELECT saga_id || ' ' || step || ' ' || direction FROM converge_saga_branch"
        + " ORDER BY saga_id, step, direction");
  }

  private static void sql(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
