package io.converge.ops.txn;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.CliRun;
import io.converge.ops.CliSchema;
import io.converge.producer.internal.TxnLog;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code converge txn tickets|resolve} against the embedded PostgreSQL: a ticket that a check-back past
 * the log retention raised (through {@link TxnLog#resolve}, as the RocketMQ check-back listener does) is
 * listed with group, topic, kind, check count, age and reason, and resolved with who and a note; a
 * message without an open ticket exits 3, bad options 2, a database that fails 1.
 */
class TxnTicketsCommandIT {

  private CliSchema db;

  @BeforeEach
  void tables() throws Exception {
    db = CliSchema.create("txncli", "producer");
    TxnLog log = new TxnLog(db.dataSource(), Duration.ofHours(1));
    for (int i = 0; i < 2; i++) { // the broker asks twice
      assertThat(log.resolve("m-purged", null, "orders", "order-events", Duration.ofHours(3), Duration.ofSeconds(30)))
          .isEqualTo(TxnLog.Outcome.PAST_RETENTION);
    }
    assertThat(log.resolve("m-young", null, "orders", "order-events", Duration.ofMinutes(5), Duration.ofSeconds(30)))
        .as("fenced, no ticket").isEqualTo(TxnLog.Outcome.ROLLED_BACK);
    db.execute("UPDATE converge_txn_ticket SET created_at = now() - interval '2 hours 5 minutes'");
  }

  @Test
  void producerTicketsAreListedWithAgeAndReasonAndResolved() throws Exception {
    CliRun list = db.run("txn", "tickets");
    assertThat(list.status()).as(list.err()).isZero();
    assertThat(list.out()).contains("1 open producer tickets").contains("2h 5m")
        .contains("older than the log retention")
        .doesNotContain("m-young");
    assertThat(list.out().lines().filter(l -> l.startsWith("m-purged")).findFirst().orElseThrow())
        .matches(
            "m-purged\\s+orders\\s+order-events\\s+CHECK_BACK_PAST_RETENTION\\s+2\\s+2h 5m\\s+check-back for a message.*");

    CliRun resolve = db.run("txn", "resolve", "m-purged", "--by", "alice", "--note", "delivered by hand");
    assertThat(resolve.status()).as(resolve.err()).isZero();
    assertThat(resolve.out()).contains("resolved the ticket of message m-purged");
    assertThat(db.count("SELECT count(*) FROM converge_txn_ticket WHERE message_id = 'm-purged' AND status = 'RESOLVED'"
        + " AND resolved_by = 'alice' AND note = 'delivered by hand' AND resolved_at IS NOT NULL")).isOne();
    assertThat(db.run("txn", "tickets").out()).contains("0 open producer tickets");

    db.run("txn", "resolve", "m-purged", "--by", "alice").assertFails(3,
        "txn resolve: message m-purged has no open ticket");
    CliRun noBy = db.run("txn", "resolve", "m-purged");
    assertThat(noBy.status()).isEqualTo(2);
    db.run("txn", "resolve", "m-purged", "--by", " ").assertFails(2,
        "--by must name who resolved the ticket, but was blank");
    db.run("txn", "tickets", "--limit", "0").assertFails(2, "--limit must be between 1 and 10000, but was 0");
    db.runIn("no_such_schema", "txn", "tickets").assertFails(1, "txn tickets failed:");
  }

}
