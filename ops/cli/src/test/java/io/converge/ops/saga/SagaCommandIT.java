package io.converge.ops.saga;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.CliRun;
import io.converge.ops.CliSchema;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code converge saga list|show|retry|compensate|resolve} against the embedded PostgreSQL, on saga rows as the
 * coordinator leaves them (a saga waiting for a reply, one whose compensation failed three times with its ticket, a
 * completed one): the list and a timeline are printed, the actions change the rows and record who did it, a refused
 * action exits 3 and changes nothing, bad options 2, a database that fails 1. That the coordinator then does the work
 * is proved in converge-saga's {@code SagaOpsIT}.
 */
class SagaCommandIT {

  private CliSchema db;

  @BeforeEach
  void tables() throws Exception {
    db = CliSchema.create("sagacli", "saga");
    db.execute(
        """
            INSERT INTO converge_saga (id, tenant, definition, state, step, step_name, attempt, sends, awaiting, version,
                                       data, next_attempt_at, deadline, created_at, updated_at, last_error)
            VALUES ('o-running', '', 'order', 'RUNNING', 1, 'debit', 1, 3, true, 4, '{"id":"o-running"}',
                    now() + interval '40 minutes', now() + interval '40 minutes', now() - interval '10 minutes', now(), NULL),
                   ('o-failed', '', 'order', 'COMPENSATION_FAILED', 0, NULL, 3, 3, false, 9, '{"id":"o-failed"}',
                    NULL, now() + interval '1 hour', now() - interval '2 hours', now(),
                    'compensation of step ''reserve'' failed 3 times; last: no reply'),
                   ('o-done', '', 'order', 'COMPLETED', 3, NULL, 1, 1, false, 7, '{"id":"o-done"}',
                    NULL, now() + interval '1 hour', now() - interval '3 hours', now(), NULL)""",
        """
            INSERT INTO converge_saga_event (saga_id, step, attempt, kind, message_id, payload, at)
            VALUES ('o-failed', NULL, NULL, 'STARTED', NULL, NULL, now() - interval '2 hours'),
                   ('o-failed', 'reserve', 3, 'COMPENSATION_FAILED', NULL, 'no reply', now() - interval '1 hour'),
                   ('o-failed', 'reserve', NULL, 'TICKET', NULL, 'compensation failed', now() - interval '1 hour')""",
        """
            INSERT INTO converge_saga_ticket (saga_id, tenant, step, kind, reason, created_at)
            VALUES ('o-failed', '', 'reserve', 'COMPENSATION_FAILED', 'compensation of step ''reserve'' failed 3 times',
                    now() - interval '1 hour'),
                   ('o-purged', '', 'reserve', 'ANOMALY',
                    'compensation of step ''reserve'' succeeded after its saga was purged', now() - interval '30 minutes')""");
  }

  @Test
  void sagasAreListedAndShownAndTheActionsAreAuditedOrRefused() throws Exception {
    CliRun list = db.run("saga", "list");
    assertThat(list.status()).as(list.err()).isZero();
    assertThat(list.out()).startsWith("2 sagas").doesNotContain("o-done");
    assertThat(list.out().lines().filter(l -> l.startsWith("o-failed")).findFirst().orElseThrow()).matches(
        "o-failed\\s+order\\s+COMPENSATION_FAILED\\s+-\\s+3\\s+2h 0m\\s+-\\s+1\\s+compensation of step 'reserve'.*");
    assertThat(list.out().lines().filter(l -> l.startsWith("o-running")).findFirst().orElseThrow())
        .matches("o-running\\s+order\\s+RUNNING\\s+debit\\s+1\\s+10m( \\d+s)?\\s+in \\d+m.*\\s+0\\s*");
    // a compensation's SUCCESS recorded after its saga's purge: a ticket with no saga row, listed on its own
    assertThat(list.out()).contains("1 open tickets of purged sagas");
    assertThat(list.out().lines().filter(l -> l.contains("o-purged")).findFirst().orElseThrow())
        .matches("\\d+\\s+o-purged\\s+reserve\\s+ANOMALY\\s+30m( \\d+s)?\\s+compensation of step 'reserve' succeeded"
            + " after its saga was purged");
    CliRun failedOnly = db.run("saga", "list", "--state", "COMPENSATION_FAILED", "--older-than", "1h");
    assertThat(failedOnly.out()).as(failedOnly.err()).startsWith("1 sagas").contains("o-failed");
    db.run("saga", "list", "--state", "COMPLETED").assertFails(2, "--state must be one of");

    CliRun show = db.run("saga", "show", "o-failed");
    assertThat(show.status()).as(show.err()).isZero();
    assertThat(show.out()).contains("saga o-failed (definition order, tenant ''): COMPENSATION_FAILED")
        .contains("3 events").containsPattern("COMPENSATION_FAILED\\s+reserve\\s+3\\s+-\\s+no reply")
        .containsPattern("TICKET\\s+reserve\\s+-\\s+-\\s+compensation failed")
        .containsPattern("ticket \\d+ OPEN COMPENSATION_FAILED at step reserve");
    db.run("saga", "show", "nope").assertFails(3, "saga show: no saga nope");

    CliRun retry = db.run("saga", "retry", "o-failed", "--operator", "alice", "--note", "inventory fixed");
    assertThat(retry.status()).as(retry.err()).isZero();
    assertThat(retry.out()).contains("retried saga o-failed: COMPENSATING at step reserve, attempt 4, due now")
        .contains("its ticket stays open");
    assertThat(db.count("SELECT count(*) FROM converge_saga WHERE id = 'o-failed' AND state = 'COMPENSATING'"
        + " AND failures = 0 AND version = 10 AND next_attempt_at <= now()")).isOne();
    assertThat(db.count("SELECT count(*) FROM converge_saga_event WHERE saga_id = 'o-failed'"
        + " AND kind = 'OPERATOR_RETRY' AND step = 'reserve' AND payload = 'alice: inventory fixed'")).isOne();

    db.run("saga", "compensate", "o-done", "--operator", "alice").assertFails(3,
        "saga compensate: saga o-done is COMPLETED: compensate applies to RUNNING sagas only; nothing changed");
    assertThat(db.count("SELECT version FROM converge_saga WHERE id = 'o-done'")).isEqualTo(7);
    assertThat(db.run("saga", "retry", "o-running").status()).as("--operator is required").isEqualTo(2);
    db.run("saga", "retry", "o-running", "--operator", " ").assertFails(2, "--operator must name who acts");

    CliRun compensate = db.run("saga", "compensate", "o-running", "--operator", "bob");
    assertThat(compensate.status()).as(compensate.err()).isZero();
    assertThat(compensate.out()).contains("saga o-running goes to compensation (it was at step debit)");
    assertThat(db.count("SELECT count(*) FROM converge_saga WHERE id = 'o-running' AND state = 'RUNNING'"
        + " AND deadline <= now() AND next_attempt_at <= now() AND version = 5")).isOne();

    CliRun resolve = db.run("saga", "resolve", "o-failed", "--operator", "alice", "--resolution", "refund checked");
    assertThat(resolve.status()).as(resolve.err()).isZero();
    assertThat(resolve.out()).containsPattern("resolved ticket \\d+ of saga o-failed \\(COMPENSATION_FAILED at step"
        + " reserve\\)");
    assertThat(db.count("SELECT count(*) FROM converge_saga_ticket WHERE saga_id = 'o-failed' AND status = 'RESOLVED'"
        + " AND resolved_by = 'alice' AND resolution = 'refund checked'")).isOne();
    db.run("saga", "resolve", "o-failed", "--operator", "alice").assertFails(3,
        "saga resolve: saga o-failed is COMPENSATING: it has no open ticket; nothing changed");
    db.run("saga", "resolve", "--operator", "alice").assertFails(2, "give either a saga's ID or --ticket N");
    db.runIn("no_such_schema", "saga", "list").assertFails(1, "saga list failed:");
  }
}
