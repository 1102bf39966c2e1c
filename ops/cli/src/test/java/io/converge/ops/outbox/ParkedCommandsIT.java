package io.converge.ops.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.CliRun;
import io.converge.ops.CliSchema;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code converge outbox parked|resume} and {@code converge dlq list|discard|tickets|resolve} against
 * the embedded PostgreSQL, through the {@code converge} command line: parked rows and dead letters are
 * shown with age and reason, a key is resumed, a dead letter discarded, a ticket resolved; an id or key
 * that is not parked exits 3, bad options 2, a database that fails 1.
 */
class ParkedCommandsIT {

  private CliSchema db;

  @BeforeEach
  void tables() throws Exception {
    db = CliSchema.create("parkedcli", "outbox", "consumer");
    db.execute(
        "INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key, header_names, header_values,"
            + " payload, created_at, attempts, last_error, parked_at) VALUES"
            + " ('m-poison', 'g', 'orders', 'poison', 'poison', '{}', '{}', '\\x00', now() - interval '3 hours', 5,"
            + "  'InvalidMessageException: 100 KiB over the 64 KiB limit', now() - interval '2 hours 5 minutes'),"
            + " ('m-healthy', 'g', 'orders', 'healthy', 'healthy', '{}', '{}', '\\x00', now(), 0, NULL, NULL)",
        "INSERT INTO converge_dlq (tenant, consumer_group, topic, message_id, reason_code, reason, attempts, headers,"
            + " payload, status, created_at) VALUES ('t1', 'billing', 'charges', 'm-dead', 'RETRIES_EXHAUSTED',"
            + " 'SQLException: deadlock detected', 8, '', '\\x00', 'PARKED', now() - interval '26 hours')",
        "INSERT INTO converge_ticket (tenant, consumer_group, topic, message_id, kind, reason, status, created_at)"
            + " VALUES ('t1', 'billing', 'charges', 'm-odd', 'MONEY_ANOMALY', 'debit exceeds the order total', 'OPEN',"
            + " now() - interval '10 minutes')");
  }

  @Test
  void parkedOutboxKeysAreListedWithAgeAndReasonAndResumed() throws Exception {
    CliRun list = db.run("outbox", "parked");
    assertThat(list.status()).as(list.err()).isZero();
    assertThat(list.out()).contains("1 parked rows").contains("poison").contains("m-poison").contains("2h 5m")
        .contains("InvalidMessageException: 100 KiB over the 64 KiB limit").doesNotContain("m-healthy");

    CliRun resume = db.run("outbox", "resume", "poison");
    assertThat(resume.status()).as(resume.err()).isZero();
    assertThat(resume.out()).contains("resumed key 'poison': 1 row(s)");
    assertThat(db.count(
        "SELECT count(*) FROM converge_outbox WHERE parked_at IS NULL AND attempts = 0 AND message_id = 'm-poison'"))
        .isOne();
    assertThat(db.run("outbox", "parked").out()).contains("0 parked rows");

    db.run("outbox", "resume", "poison").assertFails(3, "key 'poison' has no parked row");
  }

  @Test
  void aKeyParkedForTwoTenantsIsResumedOnlyForTheOneNamed() throws Exception {
    db.execute("INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key, header_names,"
        + " header_values, payload, attempts, last_error, parked_at) VALUES"
        + " ('m-t1', 'g', 'orders', '1001', '1001', '{converge-tenant}', '{t1}', '\\x00', 5, 'refused', now()),"
        + " ('m-t2', 'g', 'orders', '1001', '1001', '{converge-tenant}', '{t2}', '\\x00', 5, 'refused', now())");
    assertThat(db.run("outbox", "parked").out()).contains("m-t1").contains("t1").contains("m-t2").contains("t2");

    db.run("outbox", "resume", "1001").assertFails(2, "key '1001' is parked on 2 lines (tenant 't1', topic 'orders';"
        + " tenant 't2', topic 'orders'): name one with --tenant and/or --topic; nothing was resumed");
    db.run("outbox", "resume", "1001", "--topic", "orders").assertFails(2, "is parked on 2 lines");
    assertThat(db.count("SELECT count(*) FROM converge_outbox WHERE parked_at IS NOT NULL AND order_key = '1001'"))
        .isEqualTo(2);

    CliRun resume = db.run("outbox", "resume", "1001", "--tenant", "t2");
    assertThat(resume.status()).as(resume.err()).isZero();
    assertThat(resume.out()).contains("resumed key '1001' of tenant 't2': 1 row(s)");
    assertThat(db.count("SELECT count(*) FROM converge_outbox WHERE parked_at IS NULL AND message_id = 'm-t2'"))
        .isOne();
    assertThat(db.count("SELECT count(*) FROM converge_outbox WHERE parked_at IS NOT NULL AND message_id = 'm-t1'"))
        .isOne();
    db.run("outbox", "resume", "1001", "--tenant", "t2").assertFails(3, "key '1001' of tenant 't2' has no parked row");
  }

  @Test
  void deadLettersAndTicketsAreListedDiscardedAndResolved() throws Exception {
    CliRun list = db.run("dlq", "list");
    assertThat(list.status()).as(list.err()).isZero();
    assertThat(list.out()).contains("1 dead letters").contains("billing").contains("m-dead").contains("1d 2h")
        .contains("RETRIES_EXHAUSTED: SQLException: deadlock detected");
    long dlqId = db.count("SELECT id FROM converge_dlq WHERE message_id = 'm-dead'");
    CliRun discard = db.run("dlq", "discard", Long.toString(dlqId));
    assertThat(discard.status()).as(discard.err()).isZero();
    assertThat(db.count("SELECT count(*) FROM converge_dlq WHERE status = 'DISCARDED'")).isOne();
    assertThat(db.run("dlq", "discard", Long.toString(dlqId)).status()).as("no longer parked").isEqualTo(3);

    CliRun tickets = db.run("dlq", "tickets");
    assertThat(tickets.out()).contains("MONEY_ANOMALY").contains("m-odd").contains("10m")
        .contains("debit exceeds the order total");
    long ticketId = db.count("SELECT id FROM converge_ticket WHERE message_id = 'm-odd'");
    CliRun resolve = db.run("dlq", "resolve", Long.toString(ticketId), "--by", "alice", "--note", "refunded by hand");
    assertThat(resolve.status()).as(resolve.err()).isZero();
    assertThat(db.count("SELECT count(*) FROM converge_ticket WHERE status = 'RESOLVED' AND resolved_by = 'alice'"))
        .isOne();
    assertThat(db.run("dlq", "resolve", Long.toString(ticketId), "--by", "bob").status()).isEqualTo(3);
  }

  @Test
  void badOptionsAndAFailingDatabaseAreReported() {
    db.run("outbox", "parked", "--limit", "0").assertFails(2, "--limit must be between 1 and 10000, but was 0");
    assertThat(db.run("dlq", "resolve", "1").status()).as("--by is required").isEqualTo(2);
    db.run("dlq", "resolve", "1", "--by", " ").assertFails(2, "--by must name who resolved the ticket, but was blank");
    db.runIn("no_such_schema", "dlq", "list").assertFails(1, "dlq list failed:");
    db.runIn("no_such_schema", "outbox", "parked").assertFails(1, "outbox parked failed:");
  }

}
