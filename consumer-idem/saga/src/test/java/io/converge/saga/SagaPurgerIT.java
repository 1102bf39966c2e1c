package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.IncomingMessage;
import io.converge.core.Envelope;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The purge of finished sagas, on the embedded PostgreSQL, with sagas driven by the real coordinator and
 * participants (outbox backend, the messages delivered by hand): a COMPLETED and a COMPENSATED saga finished longer
 * than the retention ago, and a COMPENSATION_FAILED one whose ticket was resolved that long ago, go with their
 * events and tickets; a RUNNING saga, however old, a saga of any final state with an open ticket (or one resolved
 * within the retention), and a saga finished within the retention stay whole; events of a saga that no longer exists
 * go once old. A compensation that succeeds after its saga's purge (re-driven late) opens an ANOMALY ticket and is
 * counted; that ticket stays until resolved longer than the retention ago.
 */
class SagaPurgerIT {

  @Test
  void finishedSagasGoAfterTheRetentionRunningAndTicketedOnesStay() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("saga_purge");
    OrderSaga.migrate(ds);
    try (TxnProducer producer = TxnProducer.builder().group("purge").dataSource(ds)
        .backend(OutboxBackend.outbox()).build()) {
      OrderSaga saga = new OrderSaga(ds, producer, "", null, b -> {
      });
      Mailbox mail = new Mailbox(ds);
      saga.start("done", "");
      saga.start("undone", ",\"refuse\":\"debit\"");
      saga.start("fresh", "");
      saga.start("ticketed", "");
      saga.start("resolved", "");
      saga.start("confirming", ""); // COMPLETED with a ticket a person must still handle (a Confirm failing)
      saga.start("refunded", ",\"refuse\":\"debit\""); // COMPENSATED, its ticket resolved within the retention
      saga.pump(mail);
      saga.start("running", ""); // its command is never delivered
      saga.coordinator.close();
      assertThat(saga.state("done")).isEqualTo("COMPLETED");
      assertThat(saga.state("undone")).isEqualTo("COMPENSATED");
      assertThat(saga.state("running")).isEqualTo("RUNNING");
      // two sagas whose compensation failed (its three attempts) and a person was asked: one ticket stays open
      sql(ds, "UPDATE converge_saga SET state = 'COMPENSATION_FAILED', next_attempt_at = NULL"
          + " WHERE id IN ('ticketed', 'resolved')");
      sql(ds, "INSERT INTO converge_saga_ticket (saga_id, tenant, step, kind, reason, created_at)"
          + " SELECT id, tenant, 'reserve', 'COMPENSATION_FAILED', 'undo failed 3 times', now() FROM converge_saga"
          + " WHERE id IN ('ticketed', 'resolved')");
      assertThat(SagaOps.of(ds).resolve("resolved", "alice", "stock released by hand")).hasSize(1);
      // sagas end COMPLETED or COMPENSATED with a ticket by design (Transitions.tccSucceeded, a MISCONFIGURED one)
      assertThat(saga.state("confirming")).isEqualTo("COMPLETED");
      assertThat(saga.state("refunded")).isEqualTo("COMPENSATED");
      sql(ds, "INSERT INTO converge_saga_ticket (saga_id, tenant, step, kind, reason, created_at)"
          + " SELECT id, tenant, 'ship', CASE id WHEN 'confirming' THEN 'CONFIRM_FAILING' ELSE 'ANOMALY' END,"
          + " 'a person must look', now() - interval '8 days' FROM converge_saga"
          + " WHERE id IN ('confirming', 'refunded')");
      assertThat(SagaOps.of(ds).resolve("refunded", "bob", "checked")).hasSize(1);
      // everything but "fresh" finished (or was resolved) 8 days ago; "running" was last touched then too
      sql(ds, "UPDATE converge_saga SET updated_at = now() - interval '8 days' WHERE id <> 'fresh'");
      sql(ds, "UPDATE converge_saga_ticket SET resolved_at = now() - interval '8 days' WHERE status = 'RESOLVED'"
          + " AND saga_id <> 'refunded'");
      sql(ds, "UPDATE converge_saga_ticket SET resolved_at = now() - interval '1 day' WHERE saga_id = 'refunded'");
      // a late reply recorded after its saga's purge (Driver: "no such saga"), 8 days ago, and a recent one
      sql(ds, "INSERT INTO converge_saga_event (saga_id, step, attempt, kind, payload, at) VALUES"
          + " ('gone-old', 'reserve', 1, 'LATE_REPLY', 'no such saga', now() - interval '8 days'),"
          + " ('gone-new', 'reserve', 1, 'LATE_REPLY', 'no such saga', now())");
      long keptEvents = saga.count("SELECT count(*) FROM converge_saga_event"
          + " WHERE saga_id IN ('fresh', 'running', 'ticketed', 'confirming', 'refunded')");

      SagaPurger purger = new SagaPurger(ds, Duration.ofDays(7), 1); // one saga a batch: the batches loop
      assertThat(purger.countExpired()).isEqualTo(3);
      assertThat(purger.purgeExpired(100)).isEqualTo(3);

      assertThat(saga.list("SELECT id FROM converge_saga ORDER BY id"))
          .as("a finished saga with an open ticket, or one resolved within the retention, stays, whatever its state")
          .containsExactly("confirming", "fresh", "refunded", "running", "ticketed");
      assertThat(saga.list("SELECT DISTINCT saga_id FROM converge_saga_event ORDER BY saga_id"))
          .as("the purged sagas' events and the old orphan event are gone")
          .containsExactly("confirming", "fresh", "gone-new", "refunded", "running", "ticketed");
      assertThat(saga.count("SELECT count(*) FROM converge_saga_event"
          + " WHERE saga_id IN ('fresh', 'running', 'ticketed', 'confirming', 'refunded')"))
          .as("the kept sagas' events untouched").isEqualTo(keptEvents);
      assertThat(saga.list("SELECT saga_id || ' ' || kind || ' ' || status FROM converge_saga_ticket ORDER BY saga_id"))
          .containsExactly("confirming CONFIRM_FAILING OPEN", "refunded ANOMALY RESOLVED",
              "ticketed COMPENSATION_FAILED OPEN");
      assertThat(purger.countExpired()).isZero();
      assertThat(purger.purgeExpired(100)).as("nothing left to purge").isZero();
      assertThat(saga.effects("done")).as("a participant's work is not the coordinator's to purge")
          .containsExactly("reserve forward", "debit forward", "ship forward", "mark-paid forward");

      // a compensation command of "undone" parked in a dead-letter queue and re-driven after the purge: its SUCCESS
      // reply (a new message) finds no saga; it may have undone the step twice, so a person is asked
      IncomingMessage replied = new Mailbox(ds).next().stream()
          .filter(m -> "undone".equals(m.header(SagaHeaders.SAGA_ID))
              && SagaHeaders.COMPENSATE.equals(m.header(SagaHeaders.DIRECTION)) && m.topic().endsWith("replies"))
          .findFirst().orElseThrow();
      IncomingMessage redriven = IncomingMessage.builder().topic(replied.topic()).headers(replied.headers())
          .header(Envelope.MESSAGE_ID, "redriven-" + replied.envelopeMessageId()).payload(replied.payload()).build();
      List<String> counted = new CopyOnWriteArrayList<>();
      OrderSaga later = new OrderSaga(ds, producer, "", null, b -> b.metrics(new SagaMetrics() {

        @Override
        public void compensationAfterPurge(String step) {
          counted.add(step);
        }
      }));
      assertThat(later.deliver(redriven)).isEqualTo(io.converge.consumer.Outcome.PROCESSED);
      later.coordinator.close();
      assertThat(counted).containsExactly("reserve");
      assertThat(saga.list("SELECT step || ' ' || kind || ' ' || status FROM converge_saga_ticket"
          + " WHERE saga_id = 'undone'")).containsExactly("reserve ANOMALY OPEN");
      assertThat(saga.list("SELECT id FROM converge_saga WHERE id = 'undone'")).as("no saga row made").isEmpty();
      assertThat(SagaOps.of(ds).orphanTickets(10)).as("what `converge saga list` shows under the sagas")
          .extracting(t -> t.sagaId() + " " + t.step() + " " + t.kind() + " " + t.status())
          .containsExactly("undone reserve ANOMALY OPEN");
      sql(ds, "UPDATE converge_saga_event SET at = now() - interval '8 days' WHERE saga_id = 'undone'");
      assertThat(purger.purgeExpired(100)).isZero();
      assertThat(saga.list("SELECT status FROM converge_saga_ticket WHERE saga_id = 'undone'"))
          .as("an open ticket of a purged saga stays").containsExactly("OPEN");
      SagaOps.of(ds).resolve("undone", "carol", "checked: refunded once");
      sql(ds, "UPDATE converge_saga_ticket SET resolved_at = now() - interval '8 days' WHERE saga_id = 'undone'");
      sql(ds, "UPDATE converge_saga_event SET at = now() - interval '8 days' WHERE saga_id = 'undone'");
      purger.purgeExpired(100);
      assertThat(saga.count("SELECT count(*) FROM converge_saga_ticket WHERE saga_id = 'undone'")
          + saga.count("SELECT count(*) FROM converge_saga_event WHERE saga_id = 'undone'"))
          .as("once resolved longer than the retention ago, its ticket and events go").isZero();
    }
  }

  @Test
  void aRetentionShorterThanTheIdempotencyKeyTtlIsRefused() {
    DataSource ds = ConvergePostgres.shared().dataSource();
    assertThatThrownBy(() -> new SagaPurger(ds, Duration.ofHours(23), 100))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("converge.saga.retention")
        .hasMessageContaining("PT24H").hasMessageContaining("PT23H");
    assertThat(new SagaPurger(ds, Duration.ofHours(24), 100).retention()).isEqualTo(Duration.ofHours(24));
    assertThatThrownBy(() -> new SagaPurger(ds, SagaPurger.DEFAULT_RETENTION, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("converge.saga.purge-batch-size");
  }

  private static void sql(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
