package io.converge.ops.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.CliRun;
import io.converge.ops.CliSchema;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code converge pulsar parked|resume} against the embedded PostgreSQL: a Pulsar transaction recovery
 * parked is listed with group, message count, attempts, age and reason, and resumed, whether logged in one row
 * (pulsar migration V4) or by an earlier version; one that is not parked exits 3, a malformed id 2.
 */
class PulsarParkedCommandIT {

  private CliSchema db;

  @BeforeEach
  void tables() throws Exception {
    db = CliSchema.create("pulsarcli", "pulsar");
    db.execute("INSERT INTO converge_pulsar_txn (txn_most, txn_least, producer_group, deadline, created_at, attempts,"
        + " parked_at, reason) VALUES (0, 42, 'orders', now() - interval '3 hours', now() - interval '3 hours', 10,"
        + " now() - interval '2 hours 5 minutes', 'Pulsar refused message m-1 on gone: TopicTerminatedException'),"
        + " (0, 43, 'orders', now() + interval '1 minute', now(), 0, NULL, NULL)",
        "INSERT INTO converge_pulsar_txn_message (message_id, txn_most, txn_least, topic, properties, payload)"
            + " VALUES ('m-1', 0, 42, 'gone', '{}', '\\x00'), ('m-2', 0, 42, 'gone', '{}', '\\x00')",
        // logged in one row (pulsar migration V4), next to those an earlier version logged above
        "INSERT INTO converge_pulsar_unit (txn_most, txn_least, producer_group, deadline, created_at, attempts,"
            + " parked_at, reason, message_ids, topics, msg_keys, properties, payloads) VALUES (0, 44, 'refunds',"
            + " now(), now() - interval '1 hour', 7, now() - interval '1 hour', 'Pulsar refused message m-3 on closed',"
            + " '{m-3,m-4,m-5}', '{closed,closed,closed}', '{a,b,c}', '{NULL,NULL,NULL}',"
            + " ARRAY['\\x00'::bytea, '\\x00', '\\x00'])");
  }

  @Test
  void parkedTransactionsAreListedWithAgeAndReasonAndResumed() throws Exception {
    CliRun list = db.run("pulsar", "parked");
    assertThat(list.status()).as(list.err()).isZero();
    assertThat(list.out()).contains("2 parked Pulsar transactions").contains("(0,42)").contains("orders")
        .contains("2h 5m")
        .contains("Pulsar refused message m-1 on gone: TopicTerminatedException").doesNotContain("(0,43)");
    assertThat(list.out().lines().filter(l -> l.startsWith("(0,42)")).findFirst().orElseThrow())
        .matches("\\(0,42\\)\\s+orders\\s+2\\s+10\\s+.*");
    assertThat(list.out().lines().filter(l -> l.startsWith("(0,44)")).findFirst().orElseThrow())
        .matches("\\(0,44\\)\\s+refunds\\s+3\\s+7\\s+.*Pulsar refused message m-3 on closed");

    CliRun resume = db.run("pulsar", "resume", "(0,42)");
    assertThat(resume.status()).as(resume.err()).isZero();
    assertThat(db
        .count("SELECT count(*) FROM converge_pulsar_txn WHERE parked_at IS NULL AND attempts = 0 AND txn_least = 42"))
        .isOne();
    assertThat(db.run("pulsar", "resume", "(0,44)").status()).isZero();
    assertThat(db
        .count("SELECT count(*) FROM converge_pulsar_unit WHERE parked_at IS NULL AND attempts = 0 AND txn_least = 44"))
        .isOne();
    assertThat(db.run("pulsar", "parked").out()).contains("0 parked Pulsar transactions");

    db.run("pulsar", "resume", "0,42").assertFails(3, "transaction 0,42 is not parked");
    db.run("pulsar", "resume", "42").assertFails(2, "ID must be (most,least), but was 42");
  }

}
