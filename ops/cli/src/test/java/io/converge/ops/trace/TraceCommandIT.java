package io.converge.ops.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.StateMachine;
import io.converge.ops.CliRun;
import io.converge.ops.CliSchema;
import io.converge.core.Envelope;
import java.sql.Connection;
import org.junit.jupiter.api.Test;

/**
 * {@code converge trace ID} against the embedded PostgreSQL: a charge moved by a request and then by a consumer
 * (delivered twice) is traced by its id and by the message id, oldest first, one line per event; an unknown id (or a
 * schema without Converge's tables) exits 3, a blank one 2, a database that fails 1. The timeline itself is proven by {@code TimelineIT}.
 */
class TraceCommandIT {

  enum Charge {
    CREATED, AUTHORIZING, AUTHORIZED
  }

  @Test
  void tracesAChargeByItsIdAndByItsMessageId() throws Exception {
    CliSchema db = CliSchema.create("tracecli", "consumer");
    db.execute("CREATE TABLE charge (id text PRIMARY KEY, state text NOT NULL, version bigint NOT NULL DEFAULT 0)");
    db.execute("INSERT INTO charge (id, state) VALUES ('ch-1', 'CREATED')");
    StateMachine<Charge> charges = StateMachine.builder("charge", Charge.class)
        .allow(Charge.CREATED, Charge.AUTHORIZING).allow(Charge.AUTHORIZING, Charge.AUTHORIZED).build();
    try (Connection c = db.dataSource().getConnection()) {
      charges.transition(c, "ch-1", Charge.AUTHORIZING, StateMachine.Cause.of("POST /charges"));
    }
    IdempotentHandler h = IdempotentHandler.builder().group("acquirer").dataSource(db.dataSource())
        .handler((c, m) -> charges.transition(c, "ch-1", Charge.AUTHORIZED)).build();
    IncomingMessage m = IncomingMessage.builder().topic("auth-results").header(Envelope.MESSAGE_ID, "m-auth-1").build();
    assertThat(h.handle(m)).isEqualTo(Outcome.PROCESSED);
    assertThat(h.handle(m)).isEqualTo(Outcome.DUPLICATE);

    for (String id : new String[]{"ch-1", "m-auth-1"}) {
      CliRun trace = db.run("trace", id);
      assertThat(trace.status()).as(trace.err()).isZero();
      assertThat(trace.out().lines()).as(trace.out()).hasSize(4).first().isEqualTo("3 events for " + id);
      assertThat(trace.out().lines().skip(1)).satisfiesExactly(
          l -> assertThat(l).contains("converge_state_transition  ch-1  charge CREATED -> AUTHORIZING (version 1)")
              .contains("cause=POST /charges"),
          l -> assertThat(l).contains("converge_dedup  m-auth-1  consumer acquirer: PROCESSED"),
          l -> assertThat(l).contains("converge_state_transition  ch-1  charge AUTHORIZING -> AUTHORIZED (version 2),"
              + " final").contains("cause=consumer acquirer  message=m-auth-1"));
    }
    db.run("trace", "nobody").assertFails(3, "trace: nothing recorded about nobody");
    db.run("trace", " ").assertFails(2, "trace: ID must not be blank");
    db.runIn("no_such_schema", "trace", "ch-1").assertFails(3, "trace: nothing recorded about ch-1");
    CliRun.of("trace", "ch-1", "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/none?connectTimeout=1", "--user", "u")
        .assertFails(1, "trace failed: Could not read the timeline of ch-1");
  }
}
