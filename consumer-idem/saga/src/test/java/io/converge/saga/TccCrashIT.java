package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.IncomingMessage;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import java.net.URI;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A TCC coordinator killed (Runtime.halt in a child JVM) between the Try phase and the Confirm phase: both Tries ran
 * at their participants, the answer of the last one never committed. A second coordinator, in this JVM, resumes from
 * the tables: it asks the HTTP branch again (its barrier answers DUPLICATE), decides Confirm and confirms both
 * branches, each Try and Confirm taking effect once.
 */
@ExtendWith(ChildJvmExtension.class)
class TccCrashIT {

  @Test
  void anotherCoordinatorResumesAGlobalTransactionKilledBetweenTryAndConfirmAndConfirmsIt(ChildJvms jvms)
      throws Exception {
    ConvergePostgres pg = ConvergePostgres.shared();
    String schema = "tcc_crash_" + UUID.randomUUID().toString().substring(0, 8);
    try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
    }
    DataSource ds = pg.dataSource(schema);
    TccTestParticipant.migrate(ds);
    try (TxnProducer producer = TxnProducer.builder().group("tcc-survivor").dataSource(ds)
        .backend(OutboxBackend.outbox()).build();
        TccTestParticipant participant = new TccTestParticipant(ds, producer)) {
      URI base = participant.serve();
      ChildJvm child = jvms.launch(CrashingTccCoordinatorMain.class)
          .database(pg.jdbcUrl(), pg.user(), pg.password(), schema).args("g1", base.toString()).start();
      try {
        assertThat(child.awaitExit(Duration.ofSeconds(90))).as("halted; output:%n%s", child.output())
            .isEqualTo(ChildJvm.HALTED);
      } finally {
        child.close();
      }
      assertThat(
          TccTestParticipant.rows(ds, "SELECT kind || ' ' || coalesce(step, '') FROM converge_saga_event ORDER BY seq"))
          .as("every Try ran, no decision was recorded").endsWith("REPLIED account", "SENT points");
      assertThat(participant.calls("g1")).containsExactly("account try RAN", "points try RAN");

      // the survivor's clock is past the Try's timeout of points (1 s)
      try (SagaCoordinator survivor = SagaCoordinator.builder().producer(producer)
          .tcc(CrashingTccCoordinatorMain.definition(base)).replyTopic(TccTestParticipant.REPLIES)
          .clock(Clock.offset(Clock.systemUTC(), Duration.ofSeconds(5))).build()) {
        survivor.poll(); // points asked again: DUPLICATE; Confirm is decided, the Confirm of account sent
        Mailbox mail = new Mailbox(ds); // every message so far, again (at least once), and the ones they cause
        for (List<IncomingMessage> batch = mail.next(); !batch.isEmpty(); batch = mail.next()) {
          for (IncomingMessage m : batch) {
            if (m.topic().equals(TccTestParticipant.REPLIES)) {
              survivor.replyHandler().handle(m);
            } else {
              participant.handle(m);
            }
          }
        }
        survivor.poll(); // the Confirm of points (HTTP), due since the Confirm of account's reply
        assertThat(mail.next()).isEmpty();
        assertThat(TccTestParticipant.rows(ds, "SELECT state FROM converge_saga WHERE id = 'g1'"))
            .containsExactly("COMPLETED");
      }
      assertThat(participant.calls("g1")).containsExactly("account try RAN", "points try RAN", "points try DUPLICATE",
          "account try DUPLICATE", "account confirm RAN", "points confirm RAN");
      assertThat(
          TccTestParticipant.rows(ds, "SELECT kind || ' ' || coalesce(step, '') FROM converge_saga_event ORDER BY seq"))
          .containsOnlyOnce("REPLIED points", "SENT account/confirm", "REPLIED account/confirm",
              "REPLIED points/confirm", "COMPLETED ");
    }
  }

}
